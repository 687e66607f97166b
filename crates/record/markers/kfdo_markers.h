/*
 * kfdo's measurement-window markers, for programs recorded with
 * `kfdo record --window markers` (and the kernel workloads of recipes/linux):
 * samples and emulated counters cover only what runs between
 * KFDO_WINDOW_START() and KFDO_WINDOW_STOP(), on any thread or in any process
 * of the guest, in user or kernel mode.
 *
 * On x86-64 each marker is one 9-byte NOP (`nopw DISP(%rax,%rax,1)` with a
 * displacement that spells "KFD+" or "KFD-"); on aarch64 it is one
 * `movk xzr, #IMM, lsl #48` (a write to the zero register, which compilers never
 * emit) whose immediate spells "K+" or "K-". On real hardware either does
 * nothing. kfdo's QEMU plugin recognises these exact bytes
 * (crates/record/plugin/stream_format.rs; a test checks that the two agree).
 */
#ifndef KFDO_MARKERS_H
#define KFDO_MARKERS_H

#if defined(__x86_64__)
#define KFDO_WINDOW_START() \
	__asm__ __volatile__(".byte 0x66,0x0f,0x1f,0x84,0x00,0x4b,0x46,0x44,0x2b" ::: "memory")
#define KFDO_WINDOW_STOP() \
	__asm__ __volatile__(".byte 0x66,0x0f,0x1f,0x84,0x00,0x4b,0x46,0x44,0x2d" ::: "memory")
#elif defined(__aarch64__)
#define KFDO_WINDOW_START() \
	__asm__ __volatile__(".byte 0x7f,0x65,0xe9,0xf2" ::: "memory")
#define KFDO_WINDOW_STOP() \
	__asm__ __volatile__(".byte 0xbf,0x65,0xe9,0xf2" ::: "memory")
#else
#error "kfdo_markers.h: kfdo records x86-64 and aarch64 programs only"
#endif

#endif
