# zf_add_module(NAME DEPS ...) makes the static library zf_NAME from src/NAME/*.cpp.
#
# Layering is enforced by the include path: each module's public headers are
# exposed through a directory of its own (build/zf_include/NAME/zerofarm/NAME,
# a symlink to include/zerofarm/NAME). A module sees only its own headers and
# those of the modules it links, so including a header from a higher layer
# fails to compile.
function(zf_add_module name)
  cmake_parse_arguments(ZF "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  if(ZF_EXCLUDE_${name})
    list(REMOVE_ITEM srcs ${ZF_EXCLUDE_${name}})
  endif()
  set(inc ${PROJECT_BINARY_DIR}/zf_include/${name})
  file(MAKE_DIRECTORY ${inc}/zerofarm)
  if(NOT EXISTS ${inc}/zerofarm/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/zerofarm/${name} ${inc}/zerofarm/${name} SYMBOLIC)
  endif()
  if(NOT srcs)  # a module not written yet still configures
    set(srcs ${PROJECT_BINARY_DIR}/zf_empty_${name}.cpp)
    file(WRITE ${srcs} "// module ${name} has no sources yet\n")
  endif()
  add_library(zf_${name} STATIC ${srcs})
  target_include_directories(zf_${name} PUBLIC ${inc} PRIVATE ${PROJECT_SOURCE_DIR}/src/${name})
  target_link_libraries(zf_${name} PUBLIC ${ZF_DEPS} PRIVATE ${ZF_PRIVATE_DEPS})
endfunction()
