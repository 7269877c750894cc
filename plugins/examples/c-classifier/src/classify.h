/* The classifier: failures of R and Julia scripts. */
#ifndef RUNBOX_CLASSIFY_H
#define RUNBOX_CLASSIFY_H

#include "json.h"

/* The fields of ClassifyInput (sdk/wire.go) this classifier reads; the
 * others are skipped, as ABI v1 asks of a guest. */
typedef struct {
	long long exit_code;
	long long memory_bytes; /* limits.memory_bytes, 0 when unset */
	buf stderr_tail, stdout_tail;
} input;

/* read_input decodes a ClassifyInput JSON document into in (its buffers
 * reused across calls) and returns NULL, or a static message saying why
 * the text is not one; *at is then the byte offset of the problem. */
const char *read_input(const char *s, size_t n, input *in, size_t *at);

/* classify writes the answer envelope for in into out: {"result":
 * Failure} or {"result":null}. */
void classify(const input *in, buf *out);

#endif
