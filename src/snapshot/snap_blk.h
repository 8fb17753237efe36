#ifndef SNAPVIEW_SNAPSHOT_SNAP_BLK_H
#define SNAPVIEW_SNAPSHOT_SNAP_BLK_H
/*
 * The old name of snapshot/snap_stripe.h (the stripe codec), kept only
 * for src/tui/bands.c, which another change is editing; remove this file
 * once that one includes snap_stripe.h and calls
 * snap_stripe_cache_clear() (issue 29).
 */
#include "snapshot/snap_stripe.h"

#define snap_blk_cache_clear snap_stripe_cache_clear

#endif
