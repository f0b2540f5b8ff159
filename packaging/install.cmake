# Installing Weir: `cmake --install build` and the Debian package CPack makes
# from the same rules (packaging/build-deb.sh). Everything goes to the places
# a desktop expects under the prefix (/usr in the package):
#   bin/weir, bin/weir-cli
#   share/applications/io.github.weir.Weir.desktop
#   share/metainfo/io.github.weir.Weir.metainfo.xml
#   share/icons/hicolor/{scalable,16x16..512x512}/apps/io.github.weir.Weir.{svg,png}
#   share/weir/models.json, share/weir/install-models.py  (the model catalogue and its installer)
#   share/doc/weir/copyright
#   lib/weir/libweir-cuda.so  (the CUDA backend module, when it is built: its own package, weir-cuda)
# Models are not packaged: users install them into $XDG_DATA_HOME/weir/models
# (share/weir/install-models.py does that for the catalogue's models).

# Installing only copies what was built: it never starts a build (the
# package step must not rebuild a tree the tests already built).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
# Two packages: weir (everything below) and, when the CUDA module is built,
# weir-cuda with only the module. The engine finds it in lib/weir next to
# bin/ (engine/backend/cuda_module.cpp); without it the engine runs on the CPU.
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME main)
if(TARGET weir_cuda)
  install(TARGETS weir_cuda LIBRARY DESTINATION lib/weir COMPONENT cuda)
endif()

install(TARGETS weir-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET weir)
  install(TARGETS weir RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/resources/${WEIR_APP_ID}.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/resources/${WEIR_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${WEIR_ICON_SVG} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
if(WEIR_ICON_PNGS)
  install(DIRECTORY ${WEIR_ICON_PNG_DIR}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor
          FILES_MATCHING PATTERN "*.png")
endif()
install(FILES ${PROJECT_SOURCE_DIR}/resources/models.json DESTINATION ${CMAKE_INSTALL_DATADIR}/weir)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/packaging/install-models.py DESTINATION ${CMAKE_INSTALL_DATADIR}/weir)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/weir RENAME copyright)

# ---- the Debian packages (cpack -G DEB) ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME weir)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL main)
set(CPACK_DEBIAN_MAIN_PACKAGE_NAME weir)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_VENDOR "The Weir authors")
set(WEIR_DEB_MAINTAINER "The Weir authors <weir@users.noreply.github.com>" CACHE STRING "Maintainer field of the .deb")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${WEIR_DEB_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # weir_VERSION_ARCH.deb, weir-cuda_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/weir/weir")
string(CONCAT CPACK_DEBIAN_MAIN_DESCRIPTION
    "local LLM workstation: several conversations at once on one model\n"
    "Weir runs language models in GGUF files with its own inference engine.\n"
    "Several conversations generate at once on one model and share cached\n"
    "prefixes; a monitor shows both KV cache pools live; an OpenAI-compatible\n"
    "endpoint serves the same engine. weir-cli inspects, benchmarks and serves\n"
    "models from the command line.")
# Libraries the binaries link: computed by dpkg-shlibdeps.
set(CPACK_DEBIAN_MAIN_PACKAGE_SHLIBDEPS ON)
# What dpkg-shlibdeps cannot see, loaded at run time by Qt: the QML modules
# qml/ imports (and the ones they import: Templates, Window, the QtQml
# models and worker script, and the folder model the non-native file dialog
# uses), the SQLite driver and the platform plugins. The package test
# (tests/packaging) checks each import of qml/ against this list.
set(WEIR_DEB_QML_DEPENDS
    qml6-module-qtquick
    qml6-module-qtquick-controls
    qml6-module-qtquick-templates
    qml6-module-qtquick-layouts
    qml6-module-qtquick-dialogs
    qml6-module-qtquick-window
    qml6-module-qtqml-models
    qml6-module-qtqml-workerscript
    qml6-module-qt-labs-folderlistmodel
    qml6-module-qtcore)
set(WEIR_DEB_PLUGIN_DEPENDS libqt6sql6-sqlite qt6-qpa-plugins)
list(JOIN WEIR_DEB_QML_DEPENDS ", " qml_depends)
list(JOIN WEIR_DEB_PLUGIN_DEPENDS ", " plugin_depends)
set(CPACK_DEBIAN_MAIN_PACKAGE_DEPENDS "${qml_depends}, ${plugin_depends}")
# Wayland sessions; the desktop's own file dialogs (through the portal, or
# GTK's), which Qt uses in place of its drawn one when a platform theme is
# there; python3-venv for share/weir/install-models.py.
set(CPACK_DEBIAN_MAIN_PACKAGE_RECOMMENDS
    "qt6-wayland, qt6-xdgdesktopportal-platformtheme, qt6-gtk-platformtheme, python3-venv")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# The CUDA module links cuBLAS 13, which no Debian 12 package provides (it
# comes from NVIDIA's CUDA repository, or a toolkit in /usr/local/cuda), so
# dpkg-shlibdeps cannot compute this package's Depends: they are written out,
# and cuBLAS is a Recommends. Without cuBLAS or a driver the engine says
# which is missing (weir-cli devices) and runs on the CPU.
if(TARGET weir_cuda)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
  set(CPACK_DEBIAN_CUDA_PACKAGE_NAME weir-cuda)
  set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "weir (= ${PROJECT_VERSION}), libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1")
  set(CPACK_DEBIAN_CUDA_PACKAGE_RECOMMENDS "libcublas-13-0")
  string(CONCAT CPACK_DEBIAN_CUDA_DESCRIPTION
      "NVIDIA GPU engine for Weir\n"
      "The CUDA backend module of Weir's engine: quantized matrix kernels,\n"
      "paged attention and cuBLAS prompt processing on NVIDIA GPUs. It needs an\n"
      "NVIDIA driver for CUDA 13 and cuBLAS 13 (NVIDIA's CUDA repository,\n"
      "package libcublas-13-0). Choose the device in the app's engine settings\n"
      "or with --device cuda.")
endif()
# Release binaries without their debug sections (about a tenth of the size).
set(CPACK_STRIP_FILES TRUE)
include(CPack)
