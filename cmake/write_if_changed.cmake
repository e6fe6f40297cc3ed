# write_if_changed(PATH TEXT): writes TEXT to PATH only when it differs from what is there, so
# generated files keep their timestamps and do not trigger rebuilds. Included by the -P scripts.
function(write_if_changed path text)
  set(previous "")
  if(EXISTS "${path}")
    file(READ "${path}" previous)
  endif()
  if(NOT "${previous}" STREQUAL "${text}")
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
