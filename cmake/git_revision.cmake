# Writes the current git revision into a header, touching it only when it changed, so every
# build records the revision it was built from (meta.json "tool.git_revision").
include(${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake)
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE revision
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR revision STREQUAL "")
  set(revision "unknown")
endif()
set(body "#pragma once\n#define GPUOVERLAP_GIT_REVISION \"${revision}\"\n")
write_if_changed("${OUTPUT}" "${body}")
