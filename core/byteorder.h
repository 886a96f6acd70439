/*
 * byteorder.h -- little-endian 64-bit words and float64 values in byte
 * buffers, whatever the host's order: the one codec of the formats gapsim
 * writes or reads byte by byte (.npy and .npz data, the content hash, VTK's
 * inline binary arrays). A double keeps every bit (NaN payloads, -0.0).
 */
#ifndef GS_BYTEORDER_H
#define GS_BYTEORDER_H

#include <stdint.h>
#include <string.h>

static inline uint64_t gs_le64_get(const unsigned char *p)
{
    uint64_t u = 0;
    for (int k = 8; k-- > 0;)
        u = (u << 8) | p[k];
    return u;
}

static inline void gs_le64_put(unsigned char *p, uint64_t u)
{
    for (int k = 0; k < 8; k++, u >>= 8)
        p[k] = (unsigned char)(u & 0xffu);
}

static inline double gs_le_f8_get(const unsigned char *p)
{
    const uint64_t u = gs_le64_get(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static inline void gs_le_f8_put(unsigned char *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    gs_le64_put(p, u);
}

#endif
