# troupe_add_layer(<target> [DEPS <targets>...])
# One static library per top-level folder, built from every .cpp in it (and one level of
# sub-folders). While a layer has no sources yet it is an INTERFACE library, so the tree always
# configures. Include paths and the warnings target are build-only: installed, the headers live
# under <prefix>/include with the same relative paths (cmake/TroupeInstall.cmake).
include(GNUInstallDirs)

function(troupe_add_layer target)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS;EXCLUDE_DIRS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp
       ${CMAKE_CURRENT_SOURCE_DIR}/*/*.cpp)
  foreach(_dir IN LISTS ARG_EXCLUDE_DIRS)
    list(FILTER _srcs EXCLUDE REGEX "/${_dir}/")
  endforeach()
  if(_srcs)
    add_library(${target} STATIC ${_srcs})
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${target} PUBLIC ${ARG_DEPS}
                          PRIVATE $<BUILD_INTERFACE:troupe_warnings> ${ARG_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
