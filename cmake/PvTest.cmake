# pv_add_test(NAME name SOURCES a.c ... LIBS lib ... [TIMEOUT s] [LABELS l ...])
# One cmocka executable per module, registered with ctest. Tests run from the source root
# so they can find ../shared (golden numbers and real data) and skip cleanly without it.
function(pv_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  set_target_properties(${T_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "PV_SOURCE_DIR=${CMAKE_SOURCE_DIR};PV_BUILD_DIR=${CMAKE_BINARY_DIR};CMOCKA_MESSAGE_OUTPUT=STDOUT")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
