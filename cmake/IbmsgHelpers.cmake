# Helpers that every ibmsg target goes through, so warnings and sanitizers are applied alike.

# -Wall -Wextra -Werror and friends, per target.
function(ibmsg_target_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wformat=2 -Wundef
    $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes -Wmissing-prototypes>)
endfunction()

# AddressSanitizer + UBSan when IBMSG_SANITIZE is on (UB aborts so tests see it); ThreadSanitizer
# when IBMSG_SANITIZE_THREAD is on. The two cannot be combined.
function(ibmsg_target_sanitizers target)
  if(IBMSG_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined
                                             -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
  if(IBMSG_SANITIZE_THREAD)
    # GCC cannot instrument atomic_thread_fence (-Wtsan): code with fences compiles, but TSan
    # does not see the ordering they give (counters/shards/shard.c is fence-free for that reason).
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer
                                             $<$<C_COMPILER_ID:GNU>:-Wno-tsan>)
    target_link_options(${target} PUBLIC -fsanitize=thread)
  endif()
endfunction()

# ibmsg_add_layer(NAME SOURCES ... [DEPENDS layer ...])
# One folder of the library as an object library. DEPENDS names the layers below it: that is how
# the layering of docs/architecture.md is written down (and test/check_layers enforces the includes).
function(ibmsg_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(${name} OBJECT ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE IBMSG_BUILDING)
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS})
  ibmsg_target_warnings(${name})
  ibmsg_target_sanitizers(${name})
endfunction()

# ibmsg_add_executable(NAME SOURCES ... [LIBS ...]): a tool of perf/ or a test helper.
function(ibmsg_add_executable name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  ibmsg_target_warnings(${name})
  ibmsg_target_sanitizers(${name})
endfunction()

# ibmsg_install_rpath(TARGET DIR): TARGET, installed in DIR (relative to the prefix), finds
# libibmsg relative to itself ($ORIGIN), so an install under any prefix runs without
# LD_LIBRARY_PATH and a moved tree keeps working. An absolute DIR or LIBDIR gets the absolute
# library directory instead. The libraries themselves carry no run path: their users find them.
function(ibmsg_install_rpath target dir)
  if(IS_ABSOLUTE "${dir}" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(rpath "${CMAKE_INSTALL_FULL_LIBDIR}")
  else()
    file(RELATIVE_PATH up "/r/${dir}" "/r/${CMAKE_INSTALL_LIBDIR}")
    if(up STREQUAL "")
      set(rpath "$ORIGIN")
    else()
      set(rpath "$ORIGIN/${up}")
    endif()
  endif()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${rpath}")
endfunction()
