# CMake project of a staged integration tree (copied to <staged>/CMakeLists.txt by
# `harness.py prepare`). Builds <program>_original, <program>_fixed and, where a
# hand-written twin exists, <program>_twin against LibTorch via find_package(Torch).
cmake_minimum_required(VERSION 3.18)
project(torch_syncfree_integration LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
option(SYNCPROBE_CUDA "Build the GPU oracles (sync debug mode, host-wait probe, CUDA events)" OFF)
# CPU mode compares results only: a rewrite identical to the original (the tool
# changed nothing) is not built again; the harness runs the original's binary.
option(SYNCPROBE_SKIP_IDENTICAL "Do not build a fixed.cpp identical to original.cpp" OFF)
find_package(Torch REQUIRED)
set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${TORCH_CXX_FLAGS}")
find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${CCACHE_PROGRAM}")
endif()

# <torch/torch.h> costs most of each TU's compile time: one precompiled header,
# built by the first target and reused by the others (same flags for all).
set(pch_owner "")
file(GLOB program_dirs LIST_DIRECTORIES true "${CMAKE_CURRENT_SOURCE_DIR}/*")
foreach(dir ${program_dirs})
  if(EXISTS "${dir}/original.cpp")
    get_filename_component(name "${dir}" NAME)
    set(identical FALSE)
    if(SYNCPROBE_SKIP_IDENTICAL AND EXISTS "${dir}/fixed.cpp")
      file(READ "${dir}/original.cpp" original_text)
      file(READ "${dir}/fixed.cpp" fixed_text)
      if(original_text STREQUAL fixed_text)
        set(identical TRUE)
      endif()
    endif()
    foreach(variant original fixed twin)
      if(variant STREQUAL "fixed" AND identical)
        continue()
      endif()
      # The hand-written twins are timing references: built on the GPU only (CI's
      # CPU mode checks the tool's rewrites; each twin was compiled and compared
      # with its program on the CPU when it was written).
      if(variant STREQUAL "twin" AND NOT SYNCPROBE_CUDA)
        continue()
      endif()
      if(EXISTS "${dir}/${variant}.cpp")
        add_executable(${name}_${variant} "${dir}/${variant}.cpp")
        target_include_directories(${name}_${variant} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
        target_link_libraries(${name}_${variant} PRIVATE ${TORCH_LIBRARIES})
        if(SYNCPROBE_CUDA)
          target_compile_definitions(${name}_${variant} PRIVATE SYNCPROBE_CUDA)
        endif()
        if(pch_owner)
          target_precompile_headers(${name}_${variant} REUSE_FROM ${pch_owner})
        else()
          target_precompile_headers(${name}_${variant} PRIVATE <torch/torch.h>)
          set(pch_owner ${name}_${variant})
        endif()
      endif()
    endforeach()
  endif()
endforeach()

# The sync reference table (GPU only).
if(SYNCPROBE_CUDA AND EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/probe/sync_table.cpp")
  add_executable(sync_table "${CMAKE_CURRENT_SOURCE_DIR}/probe/sync_table.cpp")
  target_include_directories(sync_table PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(sync_table PRIVATE ${TORCH_LIBRARIES})
  target_compile_definitions(sync_table PRIVATE SYNCPROBE_CUDA)
endif()
