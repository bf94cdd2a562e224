# TROUPE_FUZZ=ON (with clang): every library and the tests/fuzz libFuzzer targets are built with
# coverage instrumentation plus ASan+UBSan, so `make fuzz` finds memory errors and undefined
# behaviour inside the decoders, not only in the fuzz drivers. With another compiler the option
# is refused: libFuzzer is clang's. The plain gtest replays of the corpora need none of this.
option(TROUPE_FUZZ "Build the libFuzzer targets of tests/fuzz (needs clang)" OFF)
if(TROUPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TROUPE_FUZZ needs clang (libFuzzer), got ${CMAKE_CXX_COMPILER_ID}; "
                        "configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(NOT TROUPE_SANITIZE STREQUAL "")
    message(FATAL_ERROR "TROUPE_FUZZ brings its own sanitizers; leave TROUPE_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
