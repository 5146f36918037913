// types.cuh: gemmtune's element types and their conversions, shared by the helper kernels
// (aux.cu) and the GEMM families (through common.cuh). NVRTC is given this file as the
// header "types.cuh".
//
// 16-bit types are stored as unsigned short inside a tag struct, so no CUDA header
// (cuda_fp16.h, cuda_bf16.h) is needed and the two 16-bit types cannot be mixed up:
//   gt::f16   IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits
//   gt::bf16  bfloat16: the upper half of a float (8 exponent, 7 mantissa bits)
// to_f32 is exact for both. from_f32 rounds to nearest even (f16 through the PTX cvt,
// which every target has; bf16 through cvt.rn.bf16.f32 on sm_80 and later, in integer
// arithmetic before). NaN stays NaN.
#pragma once

namespace gt {

struct f16 {
    unsigned short x;
};
struct bf16 {
    unsigned short x;
};

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(double v) { return (float)v; }
__device__ __forceinline__ float to_f32(f16 v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.x));
    return f;
}
__device__ __forceinline__ float to_f32(bf16 v) { return __uint_as_float((unsigned)v.x << 16); }

__device__ __forceinline__ double to_f64(float v) { return v; }
__device__ __forceinline__ double to_f64(double v) { return v; }
__device__ __forceinline__ double to_f64(f16 v) { return to_f32(v); }
__device__ __forceinline__ double to_f64(bf16 v) { return to_f32(v); }

// from<T>(v): v (a float or a double) rounded to T.
template <class T> __device__ __forceinline__ T from(float v);
template <> __device__ __forceinline__ float from<float>(float v) { return v; }
template <> __device__ __forceinline__ double from<double>(float v) { return v; }
template <> __device__ __forceinline__ f16 from<f16>(float v) {
    f16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(v));
    return h;
}
template <> __device__ __forceinline__ bf16 from<bf16>(float v) {
    bf16 b;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.x) : "f"(v));
    return b;
#endif
    unsigned u = __float_as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.x = (unsigned short)((u >> 16) | 0x40u);  // NaN: keep it a (quiet) NaN
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even
        b.x = (unsigned short)(u >> 16);
    }
    return b;
}
template <class T> __device__ __forceinline__ T from(double v) { return from<T>((float)v); }
template <> __device__ __forceinline__ double from<double>(double v) { return v; }

// from2<T>(lo, hi): two floats rounded to the 16-bit T (nearest even), packed as one
// 32-bit word, lo in the lower half (the lower address). One cvt on sm_80 and later, where
// from<bf16>'s integer rounding costs about six instructions a value (a large part of a
// 16-bit epilogue's time).
// Other types never call it (callers branch on the size of C); the general template is
// defined only so that their code compiles.
template <class T> __device__ __forceinline__ unsigned from2(float, float) { return 0u; }
// cvt.rn.{f16x2,bf16x2}.f32 d, a, b puts a in the upper half, b in the lower.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GT_FROM2(T, CVT)                                                            \
    template <> __device__ __forceinline__ unsigned from2<T>(float lo, float hi) {  \
        unsigned r;                                                                 \
        asm(CVT " %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));                       \
        return r;                                                                   \
    }
#else
#define GT_FROM2(T, CVT)                                                            \
    template <> __device__ __forceinline__ unsigned from2<T>(float lo, float hi) {  \
        return (unsigned)from<T>(lo).x | ((unsigned)from<T>(hi).x << 16);           \
    }
#endif
GT_FROM2(f16, "cvt.rn.f16x2.f32")
GT_FROM2(bf16, "cvt.rn.bf16x2.f32")
#undef GT_FROM2

}  // namespace gt
