# Fails when an #include points up a layer or from a client into the engine's
# internals. Run with: cmake -DWEIR_SOURCE_DIR=<source root> -P check_layers.cmake
#
#   app (clients)            -> public facade, public types, base
#   public facade headers    -> public types, base
#   facade implementation    -> everything in the engine
#   engine internals         -> internals, kernels, public types, base
#   kernels                  -> kernels, base
#   public types             -> public types, base
#   base                     -> base
# Tests of the internals (tests/engine, tests/kernels) may include anything;
# tests of the clients (tests/app, tests/server, tests/e2e) follow the app's rule.
cmake_minimum_required(VERSION 3.24)
if(NOT WEIR_SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DWEIR_SOURCE_DIR=<source root>")
endif()
set(root "${WEIR_SOURCE_DIR}")

function(layer_of path out)
  if(path MATCHES "^kernels/base/")
    set(l base)
  elseif(path MATCHES "^engine/include/weir/types/")
    set(l types)
  elseif(path MATCHES "^engine/include/")
    set(l facade)
  elseif(path MATCHES "^engine/api/")
    set(l facade_impl)
  elseif(path MATCHES "^engine/")
    set(l internals)
  elseif(path MATCHES "^kernels/")
    set(l kernels)
  elseif(path MATCHES "^(app|tests/app|tests/server|tests/e2e)/")
    set(l app)
  else()
    set(l "")
  endif()
  set(${out} "${l}" PARENT_SCOPE)
endfunction()

set(allowed_base base)
set(allowed_types types base)
set(allowed_kernels kernels base)
set(allowed_internals internals kernels types base)
set(allowed_facade facade types base)
set(allowed_facade_impl facade facade_impl internals kernels types base)
set(allowed_app app facade types base)

file(GLOB_RECURSE files RELATIVE "${root}"
  "${root}/app/*.h" "${root}/app/*.cpp"
  "${root}/engine/*.h" "${root}/engine/*.cpp"
  "${root}/kernels/*.h" "${root}/kernels/*.cpp" "${root}/kernels/*.cu" "${root}/kernels/*.cuh"
  "${root}/tests/app/*.h" "${root}/tests/app/*.cpp"
  "${root}/tests/server/*.h" "${root}/tests/server/*.cpp"
  "${root}/tests/e2e/*.h" "${root}/tests/e2e/*.cpp")

# Includes still allowed across the rule, each with the reason; the list only
# shrinks (it is empty now).
set(exceptions)

set(violations 0)
foreach(file IN LISTS files)
  layer_of("${file}" from)
  if(from STREQUAL "")
    continue()
  endif()
  get_filename_component(dir "${file}" DIRECTORY)
  file(STRINGS "${root}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    # Resolve as the compiler does: the including file's folder, the desktop
    # app's own root (its headers say "engine_host/EngineHost.h"), then the roots.
    set(candidates "${dir}/${inc}")
    if(file MATCHES "^(app/desktop|tests/app)/")
      list(APPEND candidates "app/desktop/${inc}")
    endif()
    list(APPEND candidates "${inc}" "engine/include/${inc}" "kernels/base/include/${inc}")
    set(target "")
    foreach(c IN LISTS candidates)
      cmake_path(NORMAL_PATH c)
      if(EXISTS "${root}/${c}" AND NOT IS_DIRECTORY "${root}/${c}")
        set(target "${c}")
        break()
      endif()
    endforeach()
    if(target STREQUAL "")
      continue()  # system, Qt or generated header
    endif()
    layer_of("${target}" to)
    if(to STREQUAL "" OR to IN_LIST allowed_${from})
      continue()
    endif()
    set(excepted FALSE)
    foreach(e IN LISTS exceptions)
      if("${file}->${target}" MATCHES "${e}")
        set(excepted TRUE)
      endif()
    endforeach()
    if(excepted)
      continue()
    endif()
    message(STATUS "layer violation: ${file} includes \"${inc}\" (${target}): ${from} may not include ${to}")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) break the layer rule; see engine/check_layers.cmake")
endif()
list(LENGTH files scanned)
message(STATUS "layer check: ${scanned} files, no violation")
