/* The content and checksum both ends of the size tests agree on (nodes/sizes.py computes the
 * same with numpy): pseudo-random words, and a position-weighted sum of them, so a byte that
 * is lost, moved or changed shows. */
#ifndef NERVE_TEST_CHECKSUM_H
#define NERVE_TEST_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t next_word(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Writes the words of `seed` into `data`. */
static inline void fill_words(uint8_t *data, size_t len, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t word = next_word(&x);
        memcpy(data + i, &word, 8);
    }
}

/* The checksum of what fill_words writes, known before it writes it. */
static inline uint64_t checksum_of_seed(size_t len, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1, sum = 0;
    for (size_t i = 0; i + 8 <= len; i += 8) sum += next_word(&x) * (2 * (uint64_t)(i / 8) + 1);
    return sum;
}

static inline uint64_t checksum(const uint8_t *data, size_t len) {
    uint64_t sum = 0;
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        sum += word * (2 * (uint64_t)(i / 8) + 1);
    }
    return sum;
}

/* 8 B, 64 B, ... 16 MiB, then 64 MiB. */
static const size_t SIZES[] = {8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 67108864};
#define N_SIZES (sizeof SIZES / sizeof SIZES[0])

#endif
