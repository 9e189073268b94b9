# Install layout and the Debian package (issue 30, item 5; README, "Install").
#
#   <prefix>/bin/llmcap, <prefix>/bin/llmcap-gui (when built)
#   <prefix>/share/llmcap/data/     the shipped data (data/ less data/traces/, never shipped)
#   <prefix>/share/doc/llmcap/      README.md and docs/ (the README's links hold)
#
# The binaries find the data at <their folder>/../share/llmcap/data (base/data_dir.h), so the
# tree can be installed under any prefix and moved as a whole. Tests and benchmarks are not
# installed. `cpack -G DEB` in the build folder makes llmcap_<version>_<arch>.deb (the CLI and
# the data) and, with the GUI, llmcap-gui_<version>_<arch>.deb (which depends on the first).
include(GNUInstallDirs)

# base/data_dir.h's kInstalledDataDir: the data folder as the binaries look for it.
file(RELATIVE_PATH _llmcap_bin_to_data "${CMAKE_INSTALL_FULL_BINDIR}"
     "${CMAKE_INSTALL_FULL_DATAROOTDIR}/llmcap/data")
if(NOT _llmcap_bin_to_data STREQUAL "../share/llmcap/data")
  message(FATAL_ERROR "llmcap looks for its data at <bindir>/../share/llmcap/data, but "
                      "CMAKE_INSTALL_BINDIR (${CMAKE_INSTALL_BINDIR}) and "
                      "CMAKE_INSTALL_DATAROOTDIR (${CMAKE_INSTALL_DATAROOTDIR}) put it at "
                      "<bindir>/${_llmcap_bin_to_data}: keep the default bin and share")
endif()

install(TARGETS llmcap RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/data/"
        DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/llmcap/data"
        COMPONENT cli
        # data/traces/ is git-ignored: real traces are downloaded, never shipped (docs/traces.md).
        PATTERN "traces" EXCLUDE
        PATTERN "*.swp" EXCLUDE)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}"
        COMPONENT cli)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}/docs"
        COMPONENT cli)
if(TARGET llmcap-gui)
  install(TARGETS llmcap-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gui)
endif()

set(LLMCAP_DEB_MAINTAINER
    "llmcap maintainers <maintainers@users.noreply.a-seed-1f91c517.example>"
    CACHE STRING "Maintainer field of the .deb packages")
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "llmcap")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "llmcap")
set(CPACK_PACKAGE_CONTACT "${LLMCAP_DEB_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Capacity planning and cost simulation for LLM inference on CPU and GPU instances")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)  # the binaries without their symbol tables
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${LLMCAP_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")  # <name>_<version>_<arch>.deb
# Depends from the libraries the binaries link (dpkg-shlibdeps, package dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME "llmcap")
set(CPACK_DEBIAN_GUI_PACKAGE_NAME "llmcap-gui")
set(CPACK_DEBIAN_GUI_PACKAGE_DEPENDS "llmcap (= ${PROJECT_VERSION})")
if(TARGET llmcap-gui)
  set(CPACK_COMPONENTS_ALL cli gui)
else()
  set(CPACK_COMPONENTS_ALL cli)
endif()
include(CPack)
