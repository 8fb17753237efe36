#ifndef SNAPVIEW_TUI_ACTIONS_H
#define SNAPVIEW_TUI_ACTIONS_H
/*
 * Every user action, once: _(ID, script-name, key1, key2, help). This one
 * table gives enum action, the default keymap (keys.c), the help screen
 * (pane_help.c), the names a key script may use (":zoom-in") and the key
 * list of snapview(1). Keys use the names keys_parse() knows ("<Left>",
 * "<C-l>", "<F1>", "q"); "" = no second key.
 */

#define ACTION_INFO(_)                                                         \
	_(ACT_LEFT, "left", "<Left>", "h",                                     \
	    "Cursor one column left / previous block")                         \
	_(ACT_RIGHT, "right", "<Right>", "l",                                  \
	    "Cursor one column right / next block")                            \
	_(ACT_UP, "up", "<Up>", "k",                                           \
	    "Previous event / segment / line")                                 \
	_(ACT_DOWN, "down", "<Down>", "j", "Next event / segment / line")      \
	_(ACT_PAGE_UP, "page-up", "<PgUp>", "<C-b>",                           \
	    "Half a screen back / a page up")                                  \
	_(ACT_PAGE_DOWN, "page-down", "<PgDn>", "<C-f>",                       \
	    "Half a screen on / a page down")                                  \
	_(ACT_FIRST, "first", "g", "<Home>", "Start of the trace / first row") \
	_(ACT_LAST, "last", "G", "<End>", "End of the trace / last row")       \
	_(ACT_ZOOM_IN, "zoom-in", "+", "=",                                    \
	    "Zoom the timeline in at the cursor")                              \
	_(ACT_ZOOM_OUT, "zoom-out", "-", "_", "Zoom the timeline out")         \
	_(ACT_FIT, "fit", "0", "", "Show the whole trace")                     \
	_(ACT_PAN_LEFT, "pan-left", "H", "", "Pan the timeline left")          \
	_(ACT_PAN_RIGHT, "pan-right", "L", "", "Pan the timeline right")       \
	_(ACT_PEAK, "peak", "p", "", "Jump to the peak of allocated memory")   \
	_(ACT_OOM_NEXT, "oom-next", "o", "", "Next OOM event")                 \
	_(ACT_OOM_PREV, "oom-prev", "O", "", "Previous OOM event")             \
	_(ACT_SEG_NEXT, "segment-next", "s", "", "Next segment_alloc/map")     \
	_(ACT_SEG_PREV, "segment-prev", "S", "",                               \
	    "Previous segment_alloc/map")                                      \
	_(ACT_GOTO, "goto", ":", "",                                           \
	    "Go to event #N (-1: before the first event)")                     \
	_(ACT_SEARCH, "search", "/", "<F3>",                                   \
	    "Search: 0x address, file:line or frame text (any case)")         \
	_(ACT_SEARCH_NEXT, "search-next", "n", "", "Next search match")        \
	_(ACT_SEARCH_PREV, "search-prev", "N", "", "Previous search match")    \
	_(ACT_ENTER, "enter", "<Enter>", "",                                   \
	    "Select the block / show its call stack")                          \
	_(ACT_JUMP_ALLOC, "jump-alloc", "a", "",                               \
	    "Jump to the selected allocation's alloc event")                   \
	_(ACT_JUMP_FREE, "jump-free", "f", "",                                 \
	    "Jump to the selected allocation's free event")                    \
	_(ACT_FOLD, "fold", "z", "", "Fold/unfold framework frames")           \
	_(ACT_FOCUS_NEXT, "focus-next", "<Tab>", "", "Next pane")              \
	_(ACT_FOCUS_PREV, "focus-prev", "<BTab>", "", "Previous pane")         \
	_(ACT_DEVICE, "device", "d", "<F2>", "Switch to the next device")      \
	_(ACT_AXIS, "axis", "t", "", "Toggle x axis: event index / time")      \
	_(ACT_COLOR, "color", "c", "",                                         \
	    "Colour bands by allocation / call site")                          \
	_(ACT_STACK_NEXT, "stack-next", "m", "",                               \
	    "Timeline bands: by allocation, call site, category, stream, "     \
	    "segment")                                                         \
	_(ACT_STACK_PREV, "stack-prev", "M", "",                               \
	    "Timeline bands: previous mode")                                   \
	_(ACT_LEGEND, "legend", "i", "",                                       \
	    "Timeline legend: automatic / every entry / hidden")               \
	_(ACT_TIMELINE_ONLY, "timeline-only", "Z", "",                         \
	    "Timeline full height: hide the panes below / show them")          \
	_(ACT_PICK_UP, "pick-up", "K", "",                                     \
	    "Pick the band above at the cursor (first: the bottom one)")       \
	_(ACT_PICK_DOWN, "pick-down", "J", "",                                 \
	    "Pick the band below at the cursor (first: the top one)")          \
	_(ACT_YZOOM_IN, "y-zoom-in", ">", "",                                  \
	    "Zoom the y axis in (around the picked band, else the cursor)")    \
	_(ACT_YZOOM_OUT, "y-zoom-out", "<", "", "Zoom the y axis out")         \
	_(ACT_YPAN_UP, "y-pan-up", ")", "", "Pan the y axis up")               \
	_(ACT_YPAN_DOWN, "y-pan-down", "(", "", "Pan the y axis down")         \
	_(ACT_YFIT, "y-fit", "y", "", "Fit the y axis to what is visible")     \
	_(ACT_YRANGE, "y-range", "Y", "",                                      \
	    "Fit the y axis to the visible data's min..max")                   \
	_(ACT_ANNOT_NEXT, "annot-next", "}", "",                               \
	    "Next annotation (ProfilerStep#N, Optimizer.step, ...)")           \
	_(ACT_ANNOT_PREV, "annot-prev", "{", "", "Previous annotation")        \
	_(ACT_VIEW_LEAKS, "leaks", "U", "<F5>",                                \
	    "Leak view: blocks never freed, by call site")                     \
	_(ACT_VIEW_FRAG, "frag", "F", "<F6>",                                  \
	    "Frag view: segment allocations, worst gap first")                 \
	_(ACT_VIEW_TOP, "top", "T", "<F7>",                                    \
	    "Top view: live bytes by call site at the cursor")                 \
	_(ACT_VIEW_EVENTS, "events", "E", "<F8>",                              \
	    "Event table: the events around the cursor, filtered")             \
	_(ACT_VIEW_BLOCKS, "blocks", "B", "<F9>",                              \
	    "Block table: every live block at the cursor, sorted")             \
	_(ACT_VIEW_OOM, "oom", "X", "",                                        \
	    "OOM view: why the allocation at an OOM event failed")             \
	_(ACT_VIEW_INFO, "info", "I", "",                                      \
	    "Info view: allocator settings, the file's facts, check")          \
	_(ACT_WIN_START, "window-start", "b", "",                              \
	    "Leak window: it starts at the cursor's event")                    \
	_(ACT_WIN_END, "window-end", "e", "",                                  \
	    "Leak window: it ends at the cursor; U lists its leaks")           \
	_(ACT_WIN_CLEAR, "window-clear", "u", "",                              \
	    "Leak window: clear it (leaks over the whole trace)")              \
	_(ACT_MISMATCH, "mismatch", "!", "",                                   \
	    "Go to the first event where the replay disagrees with the file")  \
	_(ACT_EXPAND_ALL, "expand-all", "*", "",                               \
	    "Tree: expand every node / collapse them all")                     \
	_(ACT_ROOT, "root", "r", "",                                           \
	    "Tree: show only the selected node's subtree / go back up")        \
	_(ACT_GROUP, "group", "V", "",                                         \
	    "Top view: group by call site / by category")                      \
	_(ACT_SORT, "sort", ".", "",                                           \
	    "Table: sort by the next column")                                  \
	_(ACT_SORT_REVERSE, "sort-reverse", "R", "",                           \
	    "Table: reverse the order")                                        \
	_(ACT_FILTER, "filter", "&", "",                                       \
	    "Event table: filter (action, size, stream, address, frame)")      \
	_(ACT_EXPORT, "export", "w", "",                                       \
	    "Write the view (list, table, stack) to a file")                   \
	_(ACT_COPY, "copy", "C", "",                                           \
	    "Send the selected stack to the clipboard (OSC 52)")               \
	_(ACT_ALLOC_NEXT, "alloc-next", "]", "",                               \
	    "Next leaked block of the site (frag view: next row)")             \
	_(ACT_ALLOC_PREV, "alloc-prev", "[", "",                               \
	    "Previous leaked block (frag view: previous row)")                 \
	_(ACT_RANKS, "ranks", "<Backspace>", "",                               \
	    "Back to the rank overview (the viewer on several files)")         \
	_(ACT_REDRAW, "redraw", "<C-l>", "", "Redraw the screen")              \
	_(ACT_HELP, "help", "?", "<F1>", "This help")                          \
	_(ACT_BACK, "back", "<Esc>", "",                                       \
	    "Close help or a view / clear the selection")                      \
	_(ACT_QUIT, "quit", "q", "<F10>", "Quit; in a view: close the view")

enum action {
	ACT_NONE,
#define ACTION_ENUM(id, name, k1, k2, help) id,
	ACTION_INFO(ACTION_ENUM)
#undef ACTION_ENUM
	ACT_COUNT
};

#endif
