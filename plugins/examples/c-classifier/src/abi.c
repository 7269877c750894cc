/* The runbox plugin ABI v1 (docs/PLUGINS.md §2) in C: the five exports a
 * classifier needs. wasi-libc's crt1-reactor.o adds _initialize, which the
 * host runs once per instance. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"

#define EXPORT(name) __attribute__((export_name(name)))

static const char manifest[] =
	"{\"result\":{\"name\":\"r-julia\",\"version\":\"0.1.0\",\"abi\":1,"
	"\"kinds\":[\"classifier\"],"
	"\"description\":\"Failures of R and Julia scripts: memory, missing packages and files, syntax (written in C)\","
	"\"frameworks\":[\"r\",\"julia\"],\"priority\":10}}";

static const char oom_answer[] = "{\"error\":\"out of memory writing the answer\"}";

/* The answer of the last call: the host copies it out before its next call
 * into this instance, so one buffer, reused, is enough. */
static buf answer;

static int64_t pack(const char *p, size_t n)
{
	return (int64_t)((uint64_t)(uintptr_t)p << 32 | (uint32_t)n);
}

static int64_t reply(void)
{
	if (answer.oom)
		return pack(oom_answer, sizeof oom_answer - 1);
	return pack(answer.p, answer.len);
}

EXPORT("runbox_abi_version") int32_t runbox_abi_version(void) { return 1; }

/* runbox_alloc returns a buffer for the next call's input; the export that
 * receives it frees it. 0 (allocation failed) makes the host fail the call
 * instead of writing anywhere. */
EXPORT("runbox_alloc") void *runbox_alloc(int32_t size)
{
	if (size < 0)
		return NULL;
	return malloc(size ? (size_t)size : 1);
}

EXPORT("runbox_describe") int64_t runbox_describe(void)
{
	return pack(manifest, sizeof manifest - 1);
}

static void put_uint(buf *b, size_t v)
{
	char tmp[24];
	int k = 0;
	do
		tmp[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < 23);
	while (k)
		buf_put(b, &tmp[--k], 1);
}

EXPORT("runbox_classify") int64_t runbox_classify(char *ptr, int32_t len)
{
	static input in;
	size_t at = 0;
	buf_reset(&answer);
	const char *err = read_input(ptr, len > 0 ? (size_t)len : 0, &in, &at);
	free(ptr);
	if (err) {
		static buf msg;
		buf_reset(&msg);
		buf_puts(&msg, "input is not a ClassifyInput JSON object: ");
		buf_puts(&msg, err);
		buf_puts(&msg, " at byte ");
		put_uint(&msg, at);
		buf_puts(&answer, "{\"error\":");
		buf_str(&answer, msg.p, msg.len); /* "bad \\u escape" needs escaping */
		buf_puts(&answer, "}");
		return reply();
	}
	classify(&in, &answer);
	return reply();
}
