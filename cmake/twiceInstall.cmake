# `cmake --install build --prefix P`: the public headers, the library, the
# `twice` command, the bundled scenarios and a package config, so that a
# project of yours says find_package(twice) and links
#   twice::twice   the test API (twice/testing.h) and the simulator behind it
#   twice::gtest   twice::twice + GoogleTest assertions (twice/gtest.h)
#   twice::plugin  the public headers alone, for a library `twice run --plugin` loads
# Internal headers (sim/, env/, gateway/, check/, run/, explore/, reports/) are
# not installed: the static libraries behind twice::twice are exported only
# because a static library's dependencies must be.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TWICE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/twice)

target_include_directories(twice_harness PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(twice_harness PROPERTIES EXPORT_NAME harness)
set_target_properties(twice_reports PROPERTIES EXPORT_NAME reports)

set(_twice_exported twice_harness twice_reports twice_testing twice_plugin_api)
if(TARGET twice_gtest)
  list(APPEND _twice_exported twice_gtest)
endif()
install(TARGETS ${_twice_exported}
  EXPORT twiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS twice RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/include/twice
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/twice/scenarios
  FILES_MATCHING PATTERN "*.toml")
install(FILES ${PROJECT_SOURCE_DIR}/docs/writing-a-handler.md ${PROJECT_SOURCE_DIR}/docs/scenarios.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

install(EXPORT twiceTargets NAMESPACE twice:: DESTINATION ${TWICE_CMAKE_DIR})

# What the exported static libraries link, found again by the config. Written
# from the targets that exist, so a dependency added to the harness is
# exported too (add its find_dependency line here if it is new).
set(TWICE_FIND_DEPENDENCIES "")
foreach(_dep
    "SQLite::SQLite3|SQLite3"
    "PostgreSQL::PostgreSQL|PostgreSQL"
    "fmt::fmt|fmt"
    "nlohmann_json::nlohmann_json|nlohmann_json 3"
    "Threads::Threads|Threads"
    "tomlplusplus::tomlplusplus|tomlplusplus 3"
    "OpenSSL::Crypto|OpenSSL")
  string(REPLACE "|" ";" _pair "${_dep}")
  list(GET _pair 0 _target)
  list(GET _pair 1 _args)
  if(TARGET ${_target})
    string(APPEND TWICE_FIND_DEPENDENCIES "find_dependency(${_args})\n")
  endif()
endforeach()
# libmariadb has no CMake package of its own on Debian: pkg-config finds it.
if(TARGET PkgConfig::MARIADB)
  string(APPEND TWICE_FIND_DEPENDENCIES
    "find_dependency(PkgConfig)\npkg_check_modules(MARIADB REQUIRED QUIET IMPORTED_TARGET GLOBAL libmariadb)\n")
endif()
# GoogleTest only for a project that asks for twice::gtest: find_package(twice COMPONENTS gtest).
if(TARGET twice_gtest)
  string(APPEND TWICE_FIND_DEPENDENCIES
    "if(\"gtest\" IN_LIST twice_FIND_COMPONENTS)\n  find_dependency(GTest)\n  set(twice_gtest_FOUND TRUE)\nendif()\n")
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/twiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/twiceConfig.cmake
  INSTALL_DESTINATION ${TWICE_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/twiceConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/twiceConfig.cmake ${PROJECT_BINARY_DIR}/twiceConfigVersion.cmake
  DESTINATION ${TWICE_CMAKE_DIR})
