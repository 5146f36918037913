/*
 * mock_cublas.h: the stand-in cuBLAS of test_dropin (mock_cublas.c): its controls and the
 * layout of its cuBLASLt objects, which the test fills.
 */
#ifndef GT_TEST_MOCK_CUBLAS_H
#define GT_TEST_MOCK_CUBLAS_H

#include <stddef.h>
#include <stdint.h>

/* A matmul descriptor: enum attributes and pointer attributes by cuBLASLt's number. */
typedef struct {
    uint32_t v[40];
    void *p[40];
} mock_desc;

/* A matrix layout. */
typedef struct {
    uint32_t type;
    int32_t order, batch;
    uint64_t rows, cols;
    int64_t ld;
} mock_layout;

/* The handle's pointer mode (0 host, 1 device); the entries' calls so far and the last m. */
void mock_cublas_set_pointer_mode(int mode);
int mock_cublas_calls(void);
int mock_cublas_last_m(void);

#endif
