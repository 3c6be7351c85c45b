# twice_check_layering(HARNESS_DIR MODULE ALLOWED): the folder MODULE of the
# harness may include its own headers, the public API ("twice/...") and those
# of the folders in ALLOWED; any other "folder/..." include of a harness
# folder stops the configure step, naming the file and line. Run at every
# configure, so a wall crossed in a new include fails the build at once
# (CMake reconfigures when a CMakeLists.txt changes; the includes are read
# again each time).
function(twice_check_layering harness_dir module allowed)
  file(GLOB _folders LIST_DIRECTORIES true RELATIVE ${harness_dir} ${harness_dir}/*)
  file(GLOB_RECURSE _files ${harness_dir}/${module}/*.h ${harness_dir}/${module}/*.cpp)
  foreach(_file IN LISTS _files)
    file(STRINGS ${_file} _lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    foreach(_line IN LISTS _lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+)/.*" "\\1" _folder "${_line}")
      if(_folder STREQUAL "${module}" OR _folder STREQUAL "twice" OR NOT _folder IN_LIST _folders)
        continue()
      endif()
      if(NOT _folder IN_LIST allowed)
        file(RELATIVE_PATH _rel ${harness_dir} ${_file})
        message(FATAL_ERROR "layering: harness/${_rel} includes \"${_folder}/...\", across the wall of "
                            "'${module}' (it may include: ${allowed}). Move the code, or declare the dependency "
                            "in harness/CMakeLists.txt if it belongs there.")
      endif()
    endforeach()
  endforeach()
endfunction()
