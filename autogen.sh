#!/bin/sh
set -e
autoreconf -fi
