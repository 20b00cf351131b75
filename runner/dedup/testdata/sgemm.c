/* The OpenBLAS reference for BenchmarkScoreVsOpenBLAS: the same blocked product locum's scoring
 * computes (every pair of rows of an n x dim float32 matrix, the upper triangle of blocks, ssyrk
 * on the diagonal ones), timed around the BLAS calls only.
 * usage: sgemm FILE N DIM BLOCK REPS; prints seconds per rep. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
	if (argc != 6) return 2;
	int n = atoi(argv[2]), dim = atoi(argv[3]), blk = atoi(argv[4]), reps = atoi(argv[5]);
	float *a = malloc(sizeof(float) * (size_t)n * dim), *c = malloc(sizeof(float) * (size_t)blk * blk);
	FILE *f = fopen(argv[1], "rb");
	if (!a || !c || !f || fread(a, sizeof(float), (size_t)n * dim, f) != (size_t)n * dim) return 2;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < reps; r++)
		for (int bi = 0; bi < n; bi += blk)
			for (int bj = bi; bj < n; bj += blk) {
				int rows = n - bi < blk ? n - bi : blk, cols = n - bj < blk ? n - bj : blk;
				if (bi == bj)
					cblas_ssyrk(CblasRowMajor, CblasUpper, CblasNoTrans, rows, dim, 1, a + (size_t)bi * dim, dim, 0, c, cols);
				else
					cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, cols, dim, 1, a + (size_t)bi * dim, dim,
						a + (size_t)bj * dim, dim, 0, c, cols);
			}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.6f\n", ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / reps);
	return 0;
}
