# External dependencies: libibverbs is required; libnuma, PAPI and PMIx are optional (AUTO/ON/OFF).
# Sets IBMSG_DEP_LIBRARIES (full paths, to link the library), IBMSG_DEP_LINK_NAMES (for users of
# the static library) and IBMSG_HAVE_NUMA / IBMSG_HAVE_PAPI / IBMSG_HAVE_PMIX (0 or 1) for ibmsg_config.h.
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
# PAPI software-defined events (Debian libsde1; sde_lib.h and libsde.so come with libpapi-dev):
# ibmsg's software counters as sde:::ibmsg:: events. Follows IBMSG_WITH_PAPI, AUTO when PAPI is
# on (a PAPI without libsde still builds).
if(IBMSG_HAVE_PAPI)
  set(IBMSG_WITH_SDE_AUTO AUTO)
  ibmsg_optional_dependency(SDE IBMSG_WITH_SDE_AUTO sde_lib.h sde)
else()
  set(IBMSG_HAVE_SDE 0)
endif()

# OpenPMIx (Debian libpmix-dev) installs outside the default paths (.../pmix2/include and lib):
# found through its pkg-config file. Static users get the library by full path.
set(IBMSG_HAVE_PMIX 0)
set(IBMSG_PMIX_INCLUDE_DIRS "")
if(NOT IBMSG_WITH_PMIX STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PMIX QUIET pmix)
  endif()
  if(PMIX_FOUND)
    find_library(PMIX_LIBRARY pmix HINTS ${PMIX_LIBRARY_DIRS} NO_DEFAULT_PATH)
  endif()
  if(PMIX_FOUND AND PMIX_LIBRARY)
    set(IBMSG_HAVE_PMIX 1)
    set(IBMSG_PMIX_INCLUDE_DIRS ${PMIX_INCLUDE_DIRS})
    list(APPEND IBMSG_DEP_LIBRARIES ${PMIX_LIBRARY})
    list(APPEND IBMSG_DEP_LINK_NAMES ${PMIX_LIBRARY})
    message(STATUS "ibmsg: PMIX found: ${PMIX_LIBRARY}")
  elseif(IBMSG_WITH_PMIX STREQUAL "ON")
    message(FATAL_ERROR "IBMSG_WITH_PMIX=ON but pmix (pkg-config pmix, libpmix-dev) was not found")
  else()
    message(STATUS "ibmsg: PMIX not found; ibmsg_world_init uses the TCP helper or one process")
  endif()
else()
  message(STATUS "ibmsg: PMIX disabled by IBMSG_WITH_PMIX=OFF")
endif()

list(APPEND IBMSG_DEP_LIBRARIES Threads::Threads ${CMAKE_DL_LIBS})
list(APPEND IBMSG_DEP_LINK_NAMES pthread dl)
