/* The writer half of json.h: buffers and JSON string literals. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

void buf_reset(buf *b) { b->len = 0; b->oom = 0; }

void buf_free(buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

static int buf_grow(buf *b, size_t n)
{
	if (b->oom)
		return 0;
	if (b->len + n <= b->cap)
		return 1;
	size_t c = b->cap ? b->cap : 256;
	while (c < b->len + n) {
		if (c > SIZE_MAX / 2) {
			b->oom = 1;
			return 0;
		}
		c *= 2;
	}
	char *p = realloc(b->p, c);
	if (!p) {
		b->oom = 1;
		return 0;
	}
	b->p = p;
	b->cap = c;
	return 1;
}

void buf_put(buf *b, const char *s, size_t n)
{
	if (n == 0 || !buf_grow(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

void buf_puts(buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_byte(buf *b, char c) { buf_put(b, &c, 1); }

/* utf8_len returns the length of the valid UTF-8 sequence at s (at most n
 * bytes), or 0 when it is not one: overlong forms, surrogates and code
 * points past U+10FFFF are not. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t k;
	unsigned cp, min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t j = 1; j < k; j++) {
		if ((s[j] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[j] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

void buf_str(buf *b, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0; /* s[run:i] is plain text not yet copied */
	buf_byte(b, '"');
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = utf8_len(s + i, n - i);
			if (k) {
				i += k;
				continue;
			}
		}
		buf_put(b, str + run, i - run);
		switch (c) {
		case '"': buf_puts(b, "\\\""); break;
		case '\\': buf_puts(b, "\\\\"); break;
		case '\n': buf_puts(b, "\\n"); break;
		case '\r': buf_puts(b, "\\r"); break;
		case '\t': buf_puts(b, "\\t"); break;
		default:
			if (c >= 0x80) {
				buf_puts(b, "\\ufffd");
			} else {
				char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				buf_put(b, e, 6);
			}
		}
		i++;
		run = i;
	}
	buf_put(b, str + run, i - run);
	buf_byte(b, '"');
}
