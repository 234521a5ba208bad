# Writes OUTPUT, a C++ source defining `const unsigned char NAME[]` and `const size_t NAME_size`
# with the bytes of INPUT (here: hq.proto's descriptor set, for JSON output; cmd/client/output.cpp).
# Run as: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed_bytes.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n  " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp" "// Generated from ${INPUT} by cmake/embed_bytes.cmake: do not edit.\n#include <cstddef>\n\nnamespace hq {\nextern const unsigned char ${NAME}[] = {\n  ${bytes}\n};\nextern const size_t ${NAME}_size = ${size};\n}  // namespace hq\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
