# SPDX-License-Identifier: Apache-2.0
# Cross-compiles for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix).
# Used by windows/cross/build-deps.sh for the third-party libraries and by the Windows build
# of memdiag itself:
#   cmake -G Ninja -DCMAKE_TOOLCHAIN_FILE=windows/cross/mingw-toolchain.cmake \
#         -DCMAKE_PREFIX_PATH=/var/cache/memdiag/windows-deps ...

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

# The posix thread model: std::thread and std::mutex need it (the win32 model has neither in
# GCC 12), and its winpthreads is linked statically below.
set(MEMDIAG_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${MEMDIAG_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${MEMDIAG_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${MEMDIAG_MINGW_TRIPLE}-windres)

# Libraries and packages come only from the mingw sysroot and the dependency prefix, never
# from the Linux host's /usr. In ONLY mode a CMAKE_PREFIX_PATH entry that is not itself a root
# is re-rooted under one and never found, so the entries become roots. Without any, the prefix
# is MEMDIAG_WINDOWS_DEPS or build-deps.sh's default. Not both: CMake searches root by root, so
# a default root would win over an explicit -DCMAKE_PREFIX_PATH.
if(CMAKE_PREFIX_PATH)
  set(MEMDIAG_WINDOWS_DEPS ${CMAKE_PREFIX_PATH})
elseif(NOT "$ENV{MEMDIAG_WINDOWS_DEPS}" STREQUAL "")
  set(MEMDIAG_WINDOWS_DEPS "$ENV{MEMDIAG_WINDOWS_DEPS}")
else()
  set(MEMDIAG_WINDOWS_DEPS /var/cache/memdiag/windows-deps)
endif()
set(CMAKE_FIND_ROOT_PATH ${MEMDIAG_WINDOWS_DEPS} /usr/${MEMDIAG_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Self-contained binaries: without these every .exe or .dll needs libstdc++-6.dll,
# libgcc_s_seh-1.dll and libwinpthread-1.dll beside it; only -static covers winpthreads.
set(MEMDIAG_MINGW_STATIC_FLAGS "-static -static-libgcc -static-libstdc++")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${MEMDIAG_MINGW_STATIC_FLAGS}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${MEMDIAG_MINGW_STATIC_FLAGS}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${MEMDIAG_MINGW_STATIC_FLAGS}")
