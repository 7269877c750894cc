/* A small JSON reader and writer: just what a runbox plugin needs to read
 * its input object and write its answer, with no dependency beyond libc. */
#ifndef RUNBOX_JSON_H
#define RUNBOX_JSON_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer. On allocation failure it sets oom and drops
 * further writes, so callers check once at the end instead of per write. */
typedef struct {
	char *p;
	size_t len, cap;
	int oom;
} buf;

void buf_reset(buf *b);
void buf_free(buf *b);
void buf_put(buf *b, const char *s, size_t n);
void buf_puts(buf *b, const char *s);
/* buf_str writes s as a JSON string literal: quotes, escapes, and every
 * byte sequence that is not UTF-8 replaced by \ufffd, so the answer is
 * valid JSON whatever the input held. */
void buf_str(buf *b, const char *s, size_t n);

/* A cursor over JSON text. err is set (to a static message) at the first
 * problem; every function is a no-op once it is set. */
typedef struct {
	const char *s;
	size_t n, i;
	const char *err;
	int first; /* no member read yet in the object being walked */
} jr;

/* jr_object_begin consumes the '{' that opens an object (after
 * whitespace); jr_object_next then moves to each member in turn, returning
 * 1 with its key decoded into key and the cursor at its value (which the
 * caller must consume with one of the readers below), or 0 after the
 * closing '}' or on error. Only one object is walked at a time. */
void jr_object_begin(jr *r);
int jr_object_next(jr *r, buf *key);
/* jr_string decodes a string value into out (escapes resolved, \u pairs
 * joined into UTF-8). A non-string value is skipped and out left empty. */
void jr_string(jr *r, buf *out);
/* jr_int reads an integer value (a number with a fraction is truncated); a
 * non-number is skipped and 0 returned. */
long long jr_int(jr *r);
/* jr_bool reads true/false; anything else is skipped and 0 returned. */
int jr_bool(jr *r);
/* jr_skip skips one value of any type, nesting included, without
 * recursion (depth is bounded by JR_MAX_DEPTH). */
void jr_skip(jr *r);
/* jr_peek returns the first byte of the next value (after whitespace), or
 * 0 at the end: '{' for an object, '"' for a string. */
char jr_peek(jr *r);
/* jr_end checks only whitespace is left. */
void jr_end(jr *r);

#define JR_MAX_DEPTH 10000

#endif
