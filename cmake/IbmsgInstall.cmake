# Installation: public headers, both libraries, the exported CMake package (ibmsg::ibmsg and
# ibmsg::ibmsg_static) with a version file, and ibmsg.pc for pkg-config.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/ibmsg DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING
        PATTERN "*.h")
install(FILES "${PROJECT_BINARY_DIR}/include/ibmsg/version.h"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ibmsg)

install(TARGETS ibmsg ibmsg_static EXPORT ibmsgTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(IBMSG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ibmsg)
install(EXPORT ibmsgTargets NAMESPACE ibmsg:: DESTINATION ${IBMSG_CMAKE_DIR})
configure_package_config_file(cmake/ibmsgConfig.cmake.in
  "${PROJECT_BINARY_DIR}/ibmsgConfig.cmake" INSTALL_DESTINATION ${IBMSG_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ibmsgConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ibmsgConfig.cmake" "${PROJECT_BINARY_DIR}/ibmsgConfigVersion.cmake"
        DESTINATION ${IBMSG_CMAKE_DIR})

# ibmsg.pc finds its prefix from where it is installed (${pcfiledir}), so an install with
# `cmake --install --prefix`, DESTDIR or a moved tree stays right; an absolute LIBDIR or INCLUDEDIR
# is taken as it is.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(IBMSG_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(IBMSG_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH IBMSG_PC_UP "/r/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/r")
  set(IBMSG_PC_PREFIX "\${pcfiledir}/${IBMSG_PC_UP}")
  set(IBMSG_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(IBMSG_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(IBMSG_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# What a static link needs besides libibmsg.a (pkg-config --static); the shared library records
# these itself.
# Names become -lNAME; a full path (PMIx, outside the default search path) stays as it is.
list(TRANSFORM IBMSG_DEP_LINK_NAMES REPLACE "^([^/].*)$" "-l\\1" OUTPUT_VARIABLE IBMSG_PC_LIBS_PRIVATE)
list(JOIN IBMSG_PC_LIBS_PRIVATE " " IBMSG_PC_LIBS_PRIVATE)
configure_file(cmake/ibmsg.pc.in "${PROJECT_BINARY_DIR}/ibmsg.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/ibmsg.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
