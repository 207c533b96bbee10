# Installs the header, the library, max_c.pc and a CMake package (max_c::max_c), and
# writes an uninstalled max_c.pc into the build tree so PKG_CONFIG_PATH=<build dir>
# works without installing.
include(CMakePackageConfigHelpers)

install(TARGETS max_c EXPORT max_cTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/max_c.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(MAX_C_PC_VERSION ${PROJECT_VERSION})
# Installed flavour: paths relative to the prefix the package lands in.
file(RELATIVE_PATH _pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(MAX_C_PC_PREFIX "\${pcfiledir}/${_pc_up}")
set(MAX_C_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(MAX_C_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
set(MAX_C_PC_RPATH "")
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/max_c.pc.in
  ${PROJECT_BINARY_DIR}/pkgconfig-install/max_c.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig-install/max_c.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Uninstalled flavour: the build tree's library and the source tree's header.
set(MAX_C_PC_PREFIX "${PROJECT_BINARY_DIR}")
set(MAX_C_PC_LIBDIR "${PROJECT_BINARY_DIR}")
set(MAX_C_PC_INCLUDEDIR "${PROJECT_SOURCE_DIR}/include")
set(MAX_C_PC_RPATH "-Wl,-rpath,${PROJECT_BINARY_DIR}")
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/max_c.pc.in ${PROJECT_BINARY_DIR}/max_c.pc @ONLY)

install(EXPORT max_cTargets NAMESPACE max_c:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/max_c)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/max_cConfig.cmake.in
  ${PROJECT_BINARY_DIR}/max_cConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/max_c)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/max_cConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/max_cConfig.cmake ${PROJECT_BINARY_DIR}/max_cConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/max_c)
