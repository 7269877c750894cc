#include <string.h>

#include "classify.h"

static int key_is(const buf *k, const char *name)
{
	size_t n = strlen(name);
	return k->len == n && memcmp(k->p, name, n) == 0;
}

/* limits reads the "limits" object; anything else there is skipped. */
static void limits(jr *r, buf *key, input *in)
{
	if (jr_peek(r) != '{') {
		jr_skip(r);
		return;
	}
	jr_object_begin(r);
	while (jr_object_next(r, key)) {
		if (key_is(key, "memory_bytes"))
			in->memory_bytes = jr_int(r);
		else
			jr_skip(r);
	}
}

const char *read_input(const char *s, size_t n, input *in, size_t *at)
{
	static buf key;
	jr r = {.s = s, .n = n};
	in->exit_code = 0;
	in->memory_bytes = 0;
	buf_reset(&in->stderr_tail);
	buf_reset(&in->stdout_tail);
	jr_object_begin(&r);
	while (jr_object_next(&r, &key)) {
		if (key_is(&key, "exit_code"))
			in->exit_code = jr_int(&r);
		else if (key_is(&key, "stderr_tail"))
			jr_string(&r, &in->stderr_tail);
		else if (key_is(&key, "stdout_tail"))
			jr_string(&r, &in->stdout_tail);
		else if (key_is(&key, "limits")) {
			int first = r.first; /* limits walks its own object */
			limits(&r, &key, in);
			r.first = first;
		} else
			jr_skip(&r);
	}
	jr_end(&r);
	if (!r.err && (key.oom || in->stderr_tail.oom || in->stdout_tail.oom))
		r.err = "out of memory reading the input";
	*at = r.i;
	return r.err;
}
