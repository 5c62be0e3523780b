# Precompiled headers: what nearly every file of a group includes (the standard library's
# containers and streams, nlohmann/json, and in the tests GoogleTest) is parsed once per group
# and build, not once per file. Parsing them was most of a file's compile under clang (a test
# file under ASan: 8.8 s -> 5.7 s; the whole ASan build 953 s -> 502 s on 2 cores); g++'s -O2
# batches, whose time is code generation, gain little (docs/development.md, "CI's time").
# A group's header is made by its first target
# and reused by the others, which compile with the same flags (clang refuses a header made
# with other sanitizers, g++ quietly parses the text instead).
#
# A file still includes what it uses: the asan build compiles each file of src/ alone, and its
# own includes of cocode's headers are all it sees of them; only the standard library's,
# nlohmann/json's and GoogleTest's may come from the precompiled header unnamed.
option(COCODE_PCH "Precompile the headers every file includes (std, nlohmann/json, GoogleTest)" ON)

# clang writes the time into a header it precompiles unless told not to, and ccache (ci/lib.sh)
# would then never find two alike. (A precompiled header names the build folder it was made in:
# with clang, a clone in another folder compiles again what a clone here left in the cache.)
if(COCODE_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_compile_options("SHELL:-Xclang -fno-pch-timestamp")
endif()

set(COCODE_PCH_COMMON <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional> <map>
    <memory> <mutex> <optional> <set> <sstream> <string> <string_view> <unordered_map>
    <utility> <variant> <vector> <nlohmann/json.hpp>)

# cocode_pch(<group> <target>...): the group's first target ever named makes its header, every
# other reuses it. Groups: src (the libraries, with libFuzzer's coverage in the asan build),
# tools (the dynamic tools, CLI11 too), tests (GoogleTest too, at the tests' -Og).
function(cocode_pch group)
  if(NOT COCODE_PCH)
    return()
  endif()
  get_property(first GLOBAL PROPERTY cocode_pch_${group})
  foreach(target IN LISTS ARGN)
    if(NOT first)
      set(first ${target})
      set_property(GLOBAL PROPERTY cocode_pch_${group} ${first})
      set(headers ${COCODE_PCH_COMMON})
      if(group STREQUAL "tools")
        list(APPEND headers <CLI/CLI.hpp>)
      elseif(group STREQUAL "tests")
        list(APPEND headers <gtest/gtest.h> <thread>)
      endif()
      target_precompile_headers(${first} PRIVATE ${headers})
    else()
      target_precompile_headers(${target} REUSE_FROM ${first})
    endif()
  endforeach()
endfunction()
