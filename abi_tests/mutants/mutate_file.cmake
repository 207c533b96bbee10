# Writes a mutated copy of a file, for the mutant libraries of the ABI checkers' self-tests.
#   cmake -DMODE=replace -DIN=... -DOUT=... -DFROM=text -DTO=text -P mutate_file.cmake
#       FROM must occur exactly once in IN; it becomes TO.
#   cmake -DMODE=hide -DIN=map -DOUT=... -DSYMBOL=name -P mutate_file.cmake
#       adds SYMBOL to the first `local:` list of a GNU version script.
# Fails the build when the pattern is not there, so a mutant can never silently be a copy of
# the original (its self-test would then fail for a reason nobody could see).
file(READ "${IN}" text)
if(MODE STREQUAL "replace")
  string(FIND "${text}" "${FROM}" first)
  string(FIND "${text}" "${FROM}" last REVERSE)
  if(first EQUAL -1)
    message(FATAL_ERROR "mutate_file: '${FROM}' not found in ${IN}: update the mutant in abi_tests/CMakeLists.txt")
  endif()
  if(NOT first EQUAL last)
    message(FATAL_ERROR "mutate_file: '${FROM}' occurs more than once in ${IN}")
  endif()
  string(REPLACE "${FROM}" "${TO}" text "${text}")
elseif(MODE STREQUAL "hide")
  string(FIND "${text}" "local:" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mutate_file: no 'local:' in the version script ${IN}")
  endif()
  math(EXPR after "${at} + 6")
  string(SUBSTRING "${text}" 0 ${after} head)
  string(SUBSTRING "${text}" ${after} -1 tail)
  set(text "${head}\n    ${SYMBOL};${tail}")
else()
  message(FATAL_ERROR "mutate_file: MODE must be replace or hide")
endif()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
