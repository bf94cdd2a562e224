# troupe_add_layer(<target> [DEPS <targets>...])
# One static library per top-level folder, built from every .cpp in it (and one level of
# sub-folders). While a layer has no sources yet it is an INTERFACE library, so the tree always
# configures.
function(troupe_add_layer target)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS;EXCLUDE_DIRS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp
       ${CMAKE_CURRENT_SOURCE_DIR}/*/*.cpp)
  foreach(_dir IN LISTS ARG_EXCLUDE_DIRS)
    list(FILTER _srcs EXCLUDE REGEX "/${_dir}/")
  endforeach()
  if(_srcs)
    add_library(${target} STATIC ${_srcs})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE troupe_warnings ${ARG_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
endfunction()
