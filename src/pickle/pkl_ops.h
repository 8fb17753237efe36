#ifndef SNAPVIEW_PICKLE_PKL_OPS_H
#define SNAPVIEW_PICKLE_PKL_OPS_H
/*
 * Every pickle opcode, protocols 0-5: enum id, byte, name, and what the
 * reader does with it. PKL_OPK_OK opcodes are executed; PKL_OPK_CODE ones
 * import or call code and are refused; PKL_OPK_TEXT ones belong to the
 * text protocols 0/1 and are not supported.
 */
#define PKL_OPK_OK 0
#define PKL_OPK_CODE 1
#define PKL_OPK_TEXT 2

#define PKL_OPS_INFO(_)                                                        \
	_(MARK, 0x28, "MARK", PKL_OPK_OK)                                      \
	_(STOP, 0x2e, "STOP", PKL_OPK_OK)                                      \
	_(POP, 0x30, "POP", PKL_OPK_OK)                                        \
	_(POP_MARK, 0x31, "POP_MARK", PKL_OPK_OK)                              \
	_(DUP, 0x32, "DUP", PKL_OPK_OK)                                        \
	_(FLOAT, 0x46, "FLOAT", PKL_OPK_TEXT)                                  \
	_(INT, 0x49, "INT", PKL_OPK_TEXT)                                      \
	_(BININT, 0x4a, "BININT", PKL_OPK_OK)                                  \
	_(BININT1, 0x4b, "BININT1", PKL_OPK_OK)                                \
	_(LONG, 0x4c, "LONG", PKL_OPK_TEXT)                                    \
	_(BININT2, 0x4d, "BININT2", PKL_OPK_OK)                                \
	_(NONE, 0x4e, "NONE", PKL_OPK_OK)                                      \
	_(PERSID, 0x50, "PERSID", PKL_OPK_CODE)                                \
	_(BINPERSID, 0x51, "BINPERSID", PKL_OPK_CODE)                          \
	_(REDUCE, 0x52, "REDUCE", PKL_OPK_CODE)                                \
	_(STRING, 0x53, "STRING", PKL_OPK_TEXT)                                \
	_(BINSTRING, 0x54, "BINSTRING", PKL_OPK_OK)                            \
	_(SHORT_BINSTRING, 0x55, "SHORT_BINSTRING", PKL_OPK_OK)                \
	_(UNICODE, 0x56, "UNICODE", PKL_OPK_TEXT)                              \
	_(BINUNICODE, 0x58, "BINUNICODE", PKL_OPK_OK)                          \
	_(APPEND, 0x61, "APPEND", PKL_OPK_OK)                                  \
	_(BUILD, 0x62, "BUILD", PKL_OPK_CODE)                                  \
	_(GLOBAL, 0x63, "GLOBAL", PKL_OPK_CODE)                                \
	_(DICT, 0x64, "DICT", PKL_OPK_OK)                                      \
	_(APPENDS, 0x65, "APPENDS", PKL_OPK_OK)                                \
	_(GET, 0x67, "GET", PKL_OPK_TEXT)                                      \
	_(BINGET, 0x68, "BINGET", PKL_OPK_OK)                                  \
	_(INST, 0x69, "INST", PKL_OPK_CODE)                                    \
	_(LONG_BINGET, 0x6a, "LONG_BINGET", PKL_OPK_OK)                        \
	_(LIST, 0x6c, "LIST", PKL_OPK_OK)                                      \
	_(OBJ, 0x6f, "OBJ", PKL_OPK_CODE)                                      \
	_(PUT, 0x70, "PUT", PKL_OPK_TEXT)                                      \
	_(BINPUT, 0x71, "BINPUT", PKL_OPK_OK)                                  \
	_(LONG_BINPUT, 0x72, "LONG_BINPUT", PKL_OPK_OK)                        \
	_(SETITEM, 0x73, "SETITEM", PKL_OPK_OK)                                \
	_(TUPLE, 0x74, "TUPLE", PKL_OPK_OK)                                    \
	_(SETITEMS, 0x75, "SETITEMS", PKL_OPK_OK)                              \
	_(BINFLOAT, 0x47, "BINFLOAT", PKL_OPK_OK)                              \
	_(EMPTY_TUPLE, 0x29, "EMPTY_TUPLE", PKL_OPK_OK)                        \
	_(EMPTY_LIST, 0x5d, "EMPTY_LIST", PKL_OPK_OK)                          \
	_(EMPTY_DICT, 0x7d, "EMPTY_DICT", PKL_OPK_OK)                          \
	_(PROTO, 0x80, "PROTO", PKL_OPK_OK)                                    \
	_(NEWOBJ, 0x81, "NEWOBJ", PKL_OPK_CODE)                                \
	_(EXT1, 0x82, "EXT1", PKL_OPK_CODE)                                    \
	_(EXT2, 0x83, "EXT2", PKL_OPK_CODE)                                    \
	_(EXT4, 0x84, "EXT4", PKL_OPK_CODE)                                    \
	_(TUPLE1, 0x85, "TUPLE1", PKL_OPK_OK)                                  \
	_(TUPLE2, 0x86, "TUPLE2", PKL_OPK_OK)                                  \
	_(TUPLE3, 0x87, "TUPLE3", PKL_OPK_OK)                                  \
	_(NEWTRUE, 0x88, "NEWTRUE", PKL_OPK_OK)                                \
	_(NEWFALSE, 0x89, "NEWFALSE", PKL_OPK_OK)                              \
	_(LONG1, 0x8a, "LONG1", PKL_OPK_OK)                                    \
	_(LONG4, 0x8b, "LONG4", PKL_OPK_OK)                                    \
	_(BINBYTES, 0x42, "BINBYTES", PKL_OPK_OK)                              \
	_(SHORT_BINBYTES, 0x43, "SHORT_BINBYTES", PKL_OPK_OK)                  \
	_(SHORT_BINUNICODE, 0x8c, "SHORT_BINUNICODE", PKL_OPK_OK)              \
	_(BINUNICODE8, 0x8d, "BINUNICODE8", PKL_OPK_OK)                        \
	_(BINBYTES8, 0x8e, "BINBYTES8", PKL_OPK_OK)                            \
	_(EMPTY_SET, 0x8f, "EMPTY_SET", PKL_OPK_OK)                            \
	_(ADDITEMS, 0x90, "ADDITEMS", PKL_OPK_OK)                              \
	_(FROZENSET, 0x91, "FROZENSET", PKL_OPK_OK)                            \
	_(NEWOBJ_EX, 0x92, "NEWOBJ_EX", PKL_OPK_CODE)                          \
	_(STACK_GLOBAL, 0x93, "STACK_GLOBAL", PKL_OPK_CODE)                    \
	_(MEMOIZE, 0x94, "MEMOIZE", PKL_OPK_OK)                                \
	_(FRAME, 0x95, "FRAME", PKL_OPK_OK)                                    \
	_(BYTEARRAY8, 0x96, "BYTEARRAY8", PKL_OPK_OK)                          \
	_(NEXT_BUFFER, 0x97, "NEXT_BUFFER", PKL_OPK_CODE)                      \
	_(READONLY_BUFFER, 0x98, "READONLY_BUFFER", PKL_OPK_CODE)

enum pkl_op {
#define PKL_OP_ENUM(id, byte, name, kind) PKL_OP_##id = byte,
	PKL_OPS_INFO(PKL_OP_ENUM)
#undef PKL_OP_ENUM
};

#endif
