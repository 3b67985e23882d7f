# External dependencies: libibverbs is required; libnuma and PAPI are optional (AUTO/ON/OFF).
# Sets IBMSG_DEP_LIBRARIES (full paths, to link the library), IBMSG_DEP_LINK_NAMES (for users of
# the static library) and IBMSG_HAVE_NUMA / IBMSG_HAVE_PAPI (0 or 1) for ibmsg_config.h.
find_package(Threads REQUIRED)

find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY ibverbs)
if(NOT IBVERBS_INCLUDE_DIR OR NOT IBVERBS_LIBRARY)
  message(FATAL_ERROR "libibverbs not found: install Debian's libibverbs-dev")
endif()
set(IBMSG_DEP_LIBRARIES ${IBVERBS_LIBRARY})
set(IBMSG_DEP_LINK_NAMES ibverbs)

# ibmsg_optional_dependency(NAME OPTION HEADER LIBRARY): finds an optional library, honouring its
# AUTO/ON/OFF option; ON and not found is an error, AUTO and not found says so and goes on.
macro(ibmsg_optional_dependency name option header library)
  set(IBMSG_HAVE_${name} 0)
  if(NOT ${option} STREQUAL "OFF")
    find_path(${name}_INCLUDE_DIR ${header})
    find_library(${name}_LIBRARY ${library})
    if(${name}_INCLUDE_DIR AND ${name}_LIBRARY)
      set(IBMSG_HAVE_${name} 1)
      list(APPEND IBMSG_DEP_LIBRARIES ${${name}_LIBRARY})
      list(APPEND IBMSG_DEP_LINK_NAMES ${library})
      message(STATUS "ibmsg: ${name} found: ${${name}_LIBRARY}")
    elseif(${option} STREQUAL "ON")
      message(FATAL_ERROR "${option}=ON but ${header} / lib${library} were not found")
    else()
      message(STATUS "ibmsg: ${name} not found; its variables will say they are unavailable")
    endif()
  else()
    message(STATUS "ibmsg: ${name} disabled by ${option}=OFF")
  endif()
endmacro()

ibmsg_optional_dependency(NUMA IBMSG_WITH_NUMA numa.h numa)
ibmsg_optional_dependency(PAPI IBMSG_WITH_PAPI papi.h papi)

list(APPEND IBMSG_DEP_LIBRARIES Threads::Threads ${CMAKE_DL_LIBS})
list(APPEND IBMSG_DEP_LINK_NAMES pthread dl)
