# find_package(TorchSyncFreeProbe): the sync probe (docs/profiles.md), compiled
# into your program against your own LibTorch (its ABI is yours):
#
#   find_package(Torch REQUIRED)
#   find_package(TorchSyncFreeProbe REQUIRED)
#   target_link_libraries(train PRIVATE TorchSyncFree::probe)
#
# then run with TORCH_SYNCFREE_PROFILE=profile.json (off otherwise). An OBJECT
# library: its objects go into the program, so the probe starts from the
# environment without a call, and its CUDA runtime interposers are the
# program's own definitions. Build the program with -g (line tables suffice:
# -g1) so that torch-syncfree --profile can name file:line.
if(TARGET TorchSyncFree::probe)
  return()
endif()
# The source tree (probe/) or the installed tree (share/torch-syncfree/probe, beside
# share/cmake/TorchSyncFreeProbe where this file is installed).
set(_tsf_probe_root "${CMAKE_CURRENT_LIST_DIR}")
if(NOT EXISTS "${_tsf_probe_root}/src/probe.cpp")
  get_filename_component(_tsf_probe_root
    "${CMAKE_CURRENT_LIST_DIR}/../../torch-syncfree/probe" ABSOLUTE)
endif()
if(NOT EXISTS "${_tsf_probe_root}/src/probe.cpp")
  set(TorchSyncFreeProbe_FOUND FALSE)
  set(TorchSyncFreeProbe_NOT_FOUND_MESSAGE "probe sources not found beside ${CMAKE_CURRENT_LIST_FILE}")
  return()
endif()
if(NOT TORCH_LIBRARIES)
  find_package(Torch REQUIRED)
endif()
add_library(torch_syncfree_probe OBJECT "${_tsf_probe_root}/src/probe.cpp")
target_include_directories(torch_syncfree_probe PUBLIC "${_tsf_probe_root}/include")
target_link_libraries(torch_syncfree_probe PUBLIC ${TORCH_LIBRARIES} ${CMAKE_DL_LIBS})
set_target_properties(torch_syncfree_probe PROPERTIES POSITION_INDEPENDENT_CODE ON)
# The CUDA parts (sync debug mode, the interposers) when LibTorch has CUDA.
if(TARGET torch_cuda OR TARGET c10_cuda OR CUDA_FOUND OR CUDAToolkit_FOUND)
  find_package(CUDAToolkit QUIET)
  target_compile_definitions(torch_syncfree_probe PUBLIC TORCH_SYNCFREE_PROBE_CUDA)
  if(CUDAToolkit_FOUND)
    target_include_directories(torch_syncfree_probe PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()
add_library(TorchSyncFree::probe ALIAS torch_syncfree_probe)
set(TorchSyncFreeProbe_FOUND TRUE)
