/*
 * kfdo's measurement-window markers, for programs recorded with
 * `kfdo record --window markers` (and the kernel workloads of recipes/linux):
 * samples and emulated counters cover only what runs between
 * KFDO_WINDOW_START() and KFDO_WINDOW_STOP(), on any thread or in any process
 * of the guest, in user or kernel mode.
 *
 * Each marker is one 9-byte NOP (`nopw DISP(%rax,%rax,1)` with a displacement
 * that spells "KFD+" or "KFD-"); on real hardware it does nothing. kfdo's QEMU
 * plugin recognises these exact bytes (crates/record/plugin/stream_format.rs;
 * a test checks that the two agree).
 */
#ifndef KFDO_MARKERS_H
#define KFDO_MARKERS_H

#define KFDO_WINDOW_START() \
	__asm__ __volatile__(".byte 0x66,0x0f,0x1f,0x84,0x00,0x4b,0x46,0x44,0x2b" ::: "memory")
#define KFDO_WINDOW_STOP() \
	__asm__ __volatile__(".byte 0x66,0x0f,0x1f,0x84,0x00,0x4b,0x46,0x44,0x2d" ::: "memory")

#endif
