#ifndef SNAPVIEW_TUI_ACTIONS_H
#define SNAPVIEW_TUI_ACTIONS_H
/*
 * Every user action, once: _(ID, script-name, key1, key2, keymaps, help).
 * This one table gives enum action, the keymaps (keys.c), the help
 * screens (pane_help.c for the viewer, ranks_overview.c for the rank
 * screens), the names a key script may use (":zoom-in") and the key
 * lists of snapview(1). Keys use the names keys_parse() knows ("<Left>",
 * "<C-l>", "<F1>", "q"); "" = no second key.
 *
 * The keymaps column says on which screens the keys are bound: the viewer
 * of one file (a rank's full view included), the rank overview, the
 * comparison of two runs. A key may mean one action in the viewer and
 * another on a rank screen (c: colour, compare); within one keymap it
 * means one action.
 */

/* Keymaps, for the keymaps column (a mask). */
#define KM_VIEW 1u
#define KM_RANKS 2u
#define KM_COMPARE 4u
#define KM_ALL (KM_VIEW | KM_RANKS | KM_COMPARE)

#define ACTION_INFO(_)                                                         \
	_(ACT_LEFT, "left", "<Left>", "h", KM_ALL,                             \
	    "Cursor one column left / previous block")                         \
	_(ACT_RIGHT, "right", "<Right>", "l", KM_ALL,                          \
	    "Cursor one column right / next block")                            \
	_(ACT_UP, "up", "<Up>", "k", KM_ALL,                                   \
	    "Previous event / segment / line")                                 \
	_(ACT_DOWN, "down", "<Down>", "j", KM_ALL,                             \
	    "Next event / segment / line")                                     \
	_(ACT_PAGE_UP, "page-up", "<PgUp>", "<C-b>", KM_ALL,                   \
	    "Half a screen back / a page up")                                  \
	_(ACT_PAGE_DOWN, "page-down", "<PgDn>", "<C-f>", KM_ALL,               \
	    "Half a screen on / a page down")                                  \
	_(ACT_FIRST, "first", "g", "<Home>", KM_ALL,                           \
	    "Start of the trace / first row")                                  \
	_(ACT_LAST, "last", "G", "<End>", KM_ALL,                              \
	    "End of the trace / last row")                                     \
	_(ACT_ZOOM_IN, "zoom-in", "+", "=", KM_VIEW,                           \
	    "Zoom the timeline in at the cursor")                              \
	_(ACT_ZOOM_OUT, "zoom-out", "-", "_", KM_VIEW,                         \
	    "Zoom the timeline out")                                           \
	_(ACT_FIT, "fit", "0", "", KM_VIEW, "Show the whole trace")            \
	_(ACT_PAN_LEFT, "pan-left", "H", "", KM_VIEW | KM_COMPARE,             \
	    "Pan the timeline left")                                           \
	_(ACT_PAN_RIGHT, "pan-right", "L", "", KM_VIEW | KM_COMPARE,           \
	    "Pan the timeline right")                                          \
	_(ACT_PEAK, "peak", "p", "", KM_VIEW | KM_COMPARE,                     \
	    "Jump to the peak of allocated memory")                            \
	_(ACT_OOM_NEXT, "oom-next", "o", "", KM_VIEW, "Next OOM event")        \
	_(ACT_OOM_PREV, "oom-prev", "O", "", KM_VIEW, "Previous OOM event")    \
	_(ACT_SEG_NEXT, "segment-next", "s", "", KM_VIEW,                      \
	    "Next segment_alloc/map")                                          \
	_(ACT_SEG_PREV, "segment-prev", "S", "", KM_VIEW,                      \
	    "Previous segment_alloc/map")                                      \
	_(ACT_GOTO, "goto", ":", "", KM_VIEW,                                  \
	    "Go to event #N (-1: before the first event)")                     \
	_(ACT_SEARCH, "search", "/", "<F3>", KM_VIEW,                          \
	    "Search: 0x address, file:line or frame text (any case)")          \
	_(ACT_SEARCH_NEXT, "search-next", "n", "", KM_VIEW,                    \
	    "Next search match")                                               \
	_(ACT_SEARCH_PREV, "search-prev", "N", "", KM_VIEW,                    \
	    "Previous search match")                                           \
	_(ACT_ENTER, "enter", "<Enter>", "", KM_ALL,                           \
	    "Select the block / show its call stack")                          \
	_(ACT_JUMP_ALLOC, "jump-alloc", "a", "", KM_VIEW,                      \
	    "Jump to the selected allocation's alloc event")                   \
	_(ACT_JUMP_FREE, "jump-free", "f", "", KM_VIEW,                        \
	    "Jump to the selected allocation's free event")                    \
	_(ACT_FOLD, "fold", "z", "", KM_VIEW, "Fold/unfold framework frames")  \
	_(ACT_FOCUS_NEXT, "focus-next", "<Tab>", "", KM_VIEW, "Next pane")     \
	_(ACT_FOCUS_PREV, "focus-prev", "<BTab>", "", KM_VIEW,                 \
	    "Previous pane")                                                   \
	_(ACT_DEVICE, "device", "d", "<F2>", KM_VIEW,                          \
	    "Switch to the next device")                                       \
	_(ACT_AXIS, "axis", "t", "", KM_VIEW,                                  \
	    "Toggle x axis: event index / time")                               \
	_(ACT_COLOR, "color", "c", "", KM_VIEW,                                \
	    "Colour bands by allocation / call site")                          \
	_(ACT_STACK_NEXT, "stack-next", "m", "", KM_VIEW,                      \
	    "Timeline bands: by allocation, call site, category, stream, "     \
	    "segment, pool")                                                   \
	_(ACT_STACK_PREV, "stack-prev", "M", "", KM_VIEW,                      \
	    "Timeline bands: previous mode")                                   \
	_(ACT_LEGEND, "legend", "i", "", KM_VIEW,                              \
	    "Timeline legend: automatic / every entry / hidden")               \
	_(ACT_TIMELINE_ONLY, "timeline-only", "Z", "", KM_VIEW,               \
	    "Timeline full height: hide the panes below / show them")          \
	_(ACT_PICK_UP, "pick-up", "K", "", KM_VIEW,                            \
	    "Pick the band above at the cursor (first: the bottom one)")       \
	_(ACT_PICK_DOWN, "pick-down", "J", "", KM_VIEW,                        \
	    "Pick the band below at the cursor (first: the top one)")          \
	_(ACT_YZOOM_IN, "y-zoom-in", ">", "", KM_VIEW,                         \
	    "Zoom the y axis in (around the picked band, else the cursor)")    \
	_(ACT_YZOOM_OUT, "y-zoom-out", "<", "", KM_VIEW,                       \
	    "Zoom the y axis out")                                             \
	_(ACT_YPAN_UP, "y-pan-up", ")", "", KM_VIEW, "Pan the y axis up")      \
	_(ACT_YPAN_DOWN, "y-pan-down", "(", "", KM_VIEW,                       \
	    "Pan the y axis down")                                             \
	_(ACT_YFIT, "y-fit", "y", "", KM_VIEW,                                 \
	    "Fit the y axis to what is visible")                               \
	_(ACT_YRANGE, "y-range", "Y", "", KM_VIEW,                             \
	    "Fit the y axis to the visible data's min..max")                   \
	_(ACT_ANNOT_NEXT, "annot-next", "}", "", KM_VIEW,                      \
	    "Next annotation (ProfilerStep#N, Optimizer.step, ...)")           \
	_(ACT_ANNOT_PREV, "annot-prev", "{", "", KM_VIEW,                      \
	    "Previous annotation")                                             \
	_(ACT_PHASE_NEXT, "phase-next", "'", "", KM_VIEW,                      \
	    "Next phase instance (rollout, update, ...): to its start")        \
	_(ACT_PHASE_PREV, "phase-prev", "`", "", KM_VIEW,                      \
	    "Previous phase instance")                                         \
	_(ACT_VIEW_LEAKS, "leaks", "U", "<F5>", KM_VIEW,                       \
	    "Leak view: blocks never freed, by call site")                     \
	_(ACT_VIEW_FRAG, "frag", "F", "<F6>", KM_VIEW,                         \
	    "Frag view: segment allocations, worst gap first")                 \
	_(ACT_VIEW_TOP, "top", "T", "<F7>", KM_VIEW,                           \
	    "Top view: live bytes by call site at the cursor")                 \
	_(ACT_VIEW_EVENTS, "events", "E", "<F8>", KM_VIEW,                     \
	    "Event table: the events around the cursor, filtered")             \
	_(ACT_VIEW_BLOCKS, "blocks", "B", "<F9>", KM_VIEW,                     \
	    "Block table: every live block at the cursor, sorted")             \
	_(ACT_VIEW_OOM, "oom", "X", "", KM_VIEW,                               \
	    "OOM view: why the allocation at an OOM event failed")             \
	_(ACT_VIEW_INFO, "info", "I", "", KM_VIEW,                             \
	    "Info view: allocator settings, the file's facts, check")          \
	_(ACT_WHATIF, "whatif", "A", "", KM_VIEW,                             \
	    "What if: the trace under other allocator settings, drawn")        \
	_(ACT_SIM_STATE, "sim-state", "D", "", KM_VIEW,                        \
	    "What if: the state pane shows the simulated state (A first)")     \
	_(ACT_VIEW_PHASES, "phases", "P", "<F4>", KM_VIEW,                     \
	    "Phase view: each phase instance, its peak, what it leaves")       \
	_(ACT_WIN_START, "window-start", "b", "", KM_VIEW,                     \
	    "Leak window: it starts at the cursor's event")                    \
	_(ACT_WIN_END, "window-end", "e", "", KM_VIEW,                         \
	    "Leak window: it ends at the cursor; U lists its leaks")           \
	_(ACT_WIN_CLEAR, "window-clear", "u", "", KM_VIEW,                     \
	    "Leak window: clear it (leaks over the whole trace)")              \
	_(ACT_PHASE_WINDOW, "phase-window", "W", "", KM_VIEW,                  \
	    "Phase view: the leak window is the selected instance (then U)")   \
	_(ACT_MISMATCH, "mismatch", "!", "", KM_VIEW,                          \
	    "Go to the first event where the replay disagrees with the file")  \
	_(ACT_EXPAND_ALL, "expand-all", "*", "", KM_VIEW,                      \
	    "Tree: expand every node / collapse them all")                     \
	_(ACT_ROOT, "root", "r", "", KM_VIEW,                                  \
	    "Tree: show only the selected node's subtree / go back up")        \
	_(ACT_GROUP, "group", "V", "", KM_VIEW,                                \
	    "Top view: group by call site / by category")                      \
	_(ACT_SORT, "sort", ".", "", KM_VIEW,                                  \
	    "Table: sort by the next column")                                  \
	_(ACT_SORT_REVERSE, "sort-reverse", "R", "", KM_VIEW,                  \
	    "Table: reverse the order")                                        \
	_(ACT_FILTER, "filter", "&", "", KM_VIEW,                              \
	    "Event table: filter (action, size, stream, address, frame)")      \
	_(ACT_EXPORT, "export", "w", "", KM_VIEW,                              \
	    "Write the view (list, table, stack) to a file")                   \
	_(ACT_COPY, "copy", "C", "", KM_VIEW,                                  \
	    "Send the selected stack to the clipboard (OSC 52)")               \
	_(ACT_ALLOC_NEXT, "alloc-next", "]", "", KM_VIEW,                      \
	    "Next leaked block of the site (frag view: next row)")             \
	_(ACT_ALLOC_PREV, "alloc-prev", "[", "", KM_VIEW,                      \
	    "Previous leaked block (frag view: previous row)")                 \
	_(ACT_RANKS, "ranks", "<Backspace>", "", KM_VIEW | KM_COMPARE,         \
	    "Back to the rank overview (the viewer on several files)")         \
	_(ACT_RANK_MARK, "rank-mark", "<Space>", "", KM_RANKS,                 \
	    "Rank overview: mark or unmark the selected rank")                 \
	_(ACT_RANK_COMPARE, "rank-compare", "c", "", KM_RANKS,                 \
	    "Rank overview: compare the two marked ranks (none marked: the "   \
	    "selected one with the peak rank)")                                \
	_(ACT_RANK_SORT, "rank-sort", "s", "", KM_RANKS,                       \
	    "Rank overview: sort by peak / by rank")                           \
	_(ACT_RANK_GRID, "rank-grid", "v", "", KM_RANKS,                       \
	    "Rank overview of a run directory: the grid of rank by step / "    \
	    "the list of its files")                                           \
	_(ACT_STEP_NEXT, "step-next", "]", "", KM_COMPARE,                     \
	    "Comparison: each file at its peak in the next (or the "           \
	    "cursor's) step")                                                  \
	_(ACT_STEP_PREV, "step-prev", "[", "", KM_COMPARE,                     \
	    "Comparison: each file at its peak in the previous step")          \
	_(ACT_PEAK_B, "peak-b", "P", "", KM_COMPARE,                           \
	    "Comparison: the cursor to B's peak (p: A's)")                     \
	_(ACT_PEAKS, "peaks", "=", "", KM_COMPARE,                             \
	    "Comparison: each file at its own peak again, as on opening")      \
	_(ACT_REDRAW, "redraw", "<C-l>", "", KM_ALL, "Redraw the screen")      \
	_(ACT_HELP, "help", "?", "<F1>", KM_ALL, "This help")                  \
	_(ACT_BACK, "back", "<Esc>", "", KM_ALL,                               \
	    "Close help or a view / clear the selection")                      \
	_(ACT_QUIT, "quit", "q", "<F10>", KM_ALL,                              \
	    "Quit; in a view: close the view")

enum action {
	ACT_NONE,
#define ACTION_ENUM(id, name, k1, k2, km, help) id,
	ACTION_INFO(ACTION_ENUM)
#undef ACTION_ENUM
	ACT_COUNT
};

#endif
