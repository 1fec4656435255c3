#!/bin/sh
# Builds integration/probe/sync_table.cpp alone against the Python package's
# LibTorch (the device machine's) and writes its table to $OUT/sync-table.md.
# usage (on the device): integration/probe/run_sync_table.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cat > "$work/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(sync_table LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Torch REQUIRED)
set(CMAKE_CXX_FLAGS "\${CMAKE_CXX_FLAGS} \${TORCH_CXX_FLAGS}")
add_executable(sync_table "$here/sync_table.cpp")
target_include_directories(sync_table PRIVATE "$here/..")
target_compile_definitions(sync_table PRIVATE SYNCPROBE_CUDA)
target_link_libraries(sync_table PRIVATE \${TORCH_LIBRARIES})
CMAKE
prefix=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)")
cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" 2>&1 ||
  { tail -30 "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j 16 > "$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
"$work/build/sync_table" | tee "${OUT:-.}/sync-table.md"
