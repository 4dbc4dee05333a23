/* json.h — the few JSON writers the runner protocol needs (one object per line). */
#ifndef CB_JSON_H
#define CB_JSON_H

#include <stdint.h>
#include <stdio.h>

/* Writes s as a JSON string literal (quotes included), or null for NULL. */
static inline void cb_json_str(FILE *f, const char *s) {
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static inline void cb_json_u64_array(FILE *f, const uint64_t *v, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n; i++) fprintf(f, i ? ",%llu" : "%llu", (unsigned long long)v[i]);
    fputc(']', f);
}

#endif
