# Fails when an #include points up a layer, from a client into the engine's
# internals, between app folders the app rule keeps apart, or when it could
# name two different files. Run with:
#   cmake -DWEIR_SOURCE_DIR=<source root> -P check_layers.cmake
#
# The engine rule:
#   app (every client)       -> public facade, public types, base
#   public facade headers    -> public types, base
#   facade implementation    -> everything in the engine
#   engine internals         -> internals, kernels, public types, base
#   kernels                  -> kernels, base
#   public types             -> public types, base
#   base                     -> base
# The app rule (each folder of app/ is a layer; each may also use the engine's
# public API as above, except remote, which uses none of the engine):
#   desktop                  -> server's public surface, remote, logging, locations, common
#   cli                      -> server's public surface, logging, locations, common
#   server                   -> its public surface, logging, locations, common
#   server's public surface  -> common (api_server.h, server_options.h, http_limits.h, cors_origin.h)
#   remote                   -> logging, common
#   logging                  -> common
#   locations, common        -> nothing else of app/
# Tests of the internals (tests/engine, tests/kernels) may include anything;
# tests/<folder> of an app folder follow that folder's rule (tests/app and
# tests/e2e: the desktop's), and any test may include tests/ helpers.
#
# Includes are resolved with the include roots the build gives each file
# (app/CMakeLists.txt, app/desktop/CMakeLists.txt): the including file's
# folder; for the desktop and its tests app/desktop (they write "chat/X.h");
# the source root (app libraries are reached as "app/<folder>/x.h"); and
# engine/include, kernels/base/include. An include that names existing files
# under two of these roots is ambiguous and fails: every include means one file.
cmake_minimum_required(VERSION 3.24)
if(NOT WEIR_SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DWEIR_SOURCE_DIR=<source root>")
endif()
set(root "${WEIR_SOURCE_DIR}")

set(app_layers common locations logging remote server cli desktop)
set(server_public_surface "api_server\\.h|server_options\\.h|http_limits\\.h|cors_origin\\.h")

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
  elseif(path MATCHES "^app/server/(${server_public_surface})$")
    set(l server_api)
  elseif(path MATCHES "^(app|tests)/([^/]+)/")
    set(folder "${CMAKE_MATCH_2}")
    if(path MATCHES "^tests/" AND folder MATCHES "^(app|e2e)$")
      set(folder desktop)
    endif()
    if(folder IN_LIST app_layers)
      set(l ${folder})
    elseif(path MATCHES "^app/")
      set(l unknown_app_folder)
    else()
      set(l "")
    endif()
  else()
    set(l "")
  endif()
  set(${out} "${l}" PARENT_SCOPE)
endfunction()

set(engine_api facade types base)
set(allowed_base base)
set(allowed_types types base)
set(allowed_kernels kernels base)
set(allowed_internals internals kernels types base)
set(allowed_facade facade types base)
set(allowed_facade_impl facade facade_impl internals kernels types base)
set(allowed_common common ${engine_api})
set(allowed_locations locations ${engine_api})
set(allowed_logging logging common ${engine_api})
set(allowed_remote remote logging common)
set(allowed_server_api server_api common ${engine_api})
set(allowed_server server server_api logging locations common ${engine_api})
set(allowed_cli cli server_api logging locations common ${engine_api})
set(allowed_desktop desktop server_api remote logging locations common ${engine_api})
set(allowed_unknown_app_folder)

set(globs "${root}/app/*.h" "${root}/app/*.cpp"
  "${root}/engine/*.h" "${root}/engine/*.cpp"
  "${root}/kernels/*.h" "${root}/kernels/*.cpp" "${root}/kernels/*.cu" "${root}/kernels/*.cuh")
foreach(folder app e2e ${app_layers})
  list(APPEND globs "${root}/tests/${folder}/*.h" "${root}/tests/${folder}/*.cpp")
endforeach()
file(GLOB_RECURSE files RELATIVE "${root}" ${globs})
list(SORT files)

# Includes still allowed across the rule, each with the reason; the list only
# shrinks (it is empty now).
set(exceptions)

set(violations 0)
foreach(file IN LISTS files)
  layer_of("${file}" from)
  if(from STREQUAL "")
    continue()
  endif()
  if(from STREQUAL "unknown_app_folder")
    message(STATUS "layer violation: ${file} is in no layer: give its app/ folder one in engine/check_layers.cmake")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  get_filename_component(dir "${file}" DIRECTORY)
  # The include roots, the including file's folder first ("." is the source root).
  set(roots "${dir}")
  if(from STREQUAL "desktop")
    list(APPEND roots "app/desktop")
  endif()
  list(APPEND roots "." "engine/include" "kernels/base/include")
  file(STRINGS "${root}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" inc "${line}")
    # Every existing file the include could name, the compiler's pick first.
    set(found "")
    foreach(r IN LISTS roots)
      set(c "${r}/${inc}")
      cmake_path(NORMAL_PATH c)
      if(EXISTS "${root}/${c}" AND NOT IS_DIRECTORY "${root}/${c}" AND NOT c IN_LIST found)
        list(APPEND found "${c}")
      endif()
    endforeach()
    list(LENGTH found count)
    if(count EQUAL 0)
      continue()  # system, Qt or generated header
    endif()
    if(count GREATER 1)
      string(REPLACE ";" ", " names "${found}")
      message(STATUS "layer violation: ${file} includes \"${inc}\", which could be any of ${names}: ambiguous")
      math(EXPR violations "${violations} + 1")
      continue()
    endif()
    set(target "${found}")
    if(target MATCHES "^tests/")
      continue()  # a test helper
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
