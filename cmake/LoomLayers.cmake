# loom_layer_headers(<target> <prefix> <source dir>)
# Makes the headers of <source dir> includable as "<prefix>/x.h" by <target>
# and by whatever links it, and by nothing else: the include root is a private
# directory in the build tree holding a single link <prefix> -> <source dir>.
function(loom_layer_headers target prefix dir)
  set(root ${CMAKE_BINARY_DIR}/layers/${prefix})
  file(MAKE_DIRECTORY ${root})
  if(NOT EXISTS ${root}/${prefix})
    file(CREATE_LINK ${dir} ${root}/${prefix} SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE $<BUILD_INTERFACE:${root}>)
  else()
    target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${root}>)
  endif()
endfunction()
