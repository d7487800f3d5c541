/* art_json.c — artifact_to_json: the artifact as one JSON document (new reference, owned by the
 * caller). Texts are copied out of the artifact; the document does not reference it.
 *
 * Shape: {"entry":{form,line,header,body,inputs,runner_instance,call_bound},
 *  "kernels":[{index,name,kind,heuristic,jit_name,line,span,source_span,comment_span,
 *              source_bytes,kernel_path,source_nodes,aten_ops,graph_fragment,
 *              signature:[{name,type,role}],mutated_arg_names,size_hints:{dim:n},grid_type,
 *              launches:[i...]}],
 *  "launches":[{index,kind,callee,kernel,line,indent,span,statement,
 *               args:[{text,param?,role?}],kwargs:{name:text},numels,extra_args,out,target,
 *               source_nodes,aten_ops}],
 *  "buffers":[{name,shape,stride,dtype,line}], "statements":[{kind,line,depth,text,...}],
 *  "unknown_statements":[{line,text}], "inputs":[...], "async_other":[{line,text}], "warnings":[...],
 *  "counts":{kernels,launches,triton_launches,vendor_calls,buffers,unknown,statements}} */
#include <stdlib.h>
#include <string.h>

#include "artifact/art_internal.h"

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }
static json_t *jspan(art_span s) { return json_pack("{s:I,s:I}", "off", (json_int_t)s.off, "len", (json_int_t)s.len); }
/* Text as a JSON string; invalid UTF-8 (not expected from Inductor) becomes '?' bytes. */
static json_t *jtext(const artifact *a, art_span s) {
    json_t *j = json_stringn(a->text + s.off, s.len);
    if (j) return j;
    char *c = art_dup(a, s.off, s.len);
    for (size_t i = 0; i < s.len; i++)
        if ((unsigned char)c[i] >= 0x80 || c[i] == '\0') c[i] = '?';
    j = json_stringn(c, s.len);
    free(c);
    return j;
}
static json_t *jlist(const art_strlist *l) {
    json_t *j = json_array();
    for (size_t i = 0; i < l->n; i++) json_array_append_new(j, json_string(l->v[i]));
    return j;
}

static json_t *kernel_json(const artifact *a, size_t ki) {
    const art_kernel *k = &a->kernels[ki];
    json_t *sig = json_array(), *hints = json_object(), *ls = json_array();
    for (size_t i = 0; i < k->nparams; i++)
        json_array_append_new(sig, json_pack("{s:s,s:s,s:s}", "name", k->params[i].name, "type",
                                             k->params[i].type, "role", art_role_name(k->params[i].role)));
    for (size_t i = 0; i < k->nhints; i++)
        json_object_set_new(hints, k->hints[i].dim, json_integer(k->hints[i].value));
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kernel == (int)ki) json_array_append_new(ls, json_integer((json_int_t)i));
    json_t *j = json_object();
    json_object_set_new(j, "index", json_integer((json_int_t)ki));
    json_object_set_new(j, "name", json_string(k->name));
    json_object_set_new(j, "kind", json_string(art_kernel_kind_name(k->kind)));
    json_object_set_new(j, "heuristic", jstr_or_null(k->heuristic));
    json_object_set_new(j, "jit_name", jstr_or_null(k->jit_name));
    json_object_set_new(j, "line", json_integer(k->line));
    json_object_set_new(j, "span", jspan(k->stmt));
    json_object_set_new(j, "source_span", jspan(k->literal));
    json_object_set_new(j, "comment_span", jspan(k->comment));
    json_object_set_new(j, "source_bytes", json_integer((json_int_t)k->source_len));
    json_object_set_new(j, "kernel_path", jstr_or_null(k->kernel_path));
    json_object_set_new(j, "source_nodes", jlist(&k->source_nodes));
    json_object_set_new(j, "aten_ops", jlist(&k->aten_ops));
    json_object_set_new(j, "graph_fragment", jlist(&k->graph_fragment));
    json_object_set_new(j, "signature", sig);
    json_object_set_new(j, "mutated_arg_names", jlist(&k->mutated));
    json_object_set_new(j, "size_hints", hints);
    json_object_set_new(j, "grid_type", jstr_or_null(k->grid_type));
    json_object_set_new(j, "launches", ls);
    return j;
}

static json_t *launch_json(const artifact *a, const art_launch *l) {
    json_t *args = json_array(), *kw = json_object(), *nums = json_array();
    for (size_t i = 0; i < l->args.n; i++) {
        json_t *x = json_pack("{s:s}", "text", l->args.v[i]);
        const art_param *p = art_launch_param(a, l, i);
        if (p) {
            json_object_set_new(x, "param", json_string(p->name));
            json_object_set_new(x, "role", json_string(art_role_name(p->role)));
        }
        json_array_append_new(args, x);
    }
    for (size_t i = 0; i < l->kwnames.n; i++)
        json_object_set_new(kw, l->kwnames.v[i], json_string(l->kwvals.v[i]));
    for (size_t i = 0; i < l->nnumels; i++) json_array_append_new(nums, json_integer(l->numels[i]));
    json_t *j = json_object();
    json_object_set_new(j, "index", json_integer(l->index));
    json_object_set_new(j, "kind", json_string(l->kind == ART_L_TRITON ? "triton" : "vendor"));
    json_object_set_new(j, "callee", json_string(l->callee));
    json_object_set_new(j, "kernel", l->kernel >= 0 ? json_integer(l->kernel) : json_null());
    json_object_set_new(j, "line", json_integer(l->line));
    json_object_set_new(j, "indent", json_string(l->indent));
    json_object_set_new(j, "span", jspan(l->span));
    json_object_set_new(j, "statement", json_integer((json_int_t)l->stmt));
    json_object_set_new(j, "args", args);
    json_object_set_new(j, "kwargs", kw);
    json_object_set_new(j, "numels", nums);
    json_object_set_new(j, "extra_args", json_integer((json_int_t)l->nextra));
    json_object_set_new(j, "out", jstr_or_null(l->out));
    json_object_set_new(j, "target", jstr_or_null(l->target));
    json_object_set_new(j, "source_nodes", jlist(&l->source_nodes));
    json_object_set_new(j, "aten_ops", jlist(&l->aten_ops));
    return j;
}

static json_t *stmt_json(const artifact *a, const art_stmt *s) {
    json_t *j = json_object();
    json_object_set_new(j, "kind", json_string(art_stmt_kind_name(s->kind)));
    json_object_set_new(j, "line", json_integer(s->line));
    json_object_set_new(j, "depth", json_integer(s->depth));
    json_object_set_new(j, "text", jtext(a, s->span));
    if (s->target) json_object_set_new(j, "target", json_string(s->target));
    if (s->of) json_object_set_new(j, "of", json_string(s->of));
    if (s->kind == ART_ST_ALIAS) json_object_set_new(j, "reuse", json_boolean(s->reuse));
    if (s->names.n) json_object_set_new(j, "names", jlist(&s->names));
    if (s->launch >= 0) json_object_set_new(j, "launch", json_integer(s->launch));
    if (s->inline_part) json_object_set_new(j, "inline", json_true());
    return j;
}

static json_t *input_json(const art_input *in) {
    json_t *j = json_pack("{s:s}", "name", in->name);
    if (in->value) {
        json_object_set_new(j, "value", json_string(in->value));
        return j;
    }
    json_object_set_new(j, "shape", jstr_or_null(in->shape));
    json_object_set_new(j, "stride", jstr_or_null(in->stride));
    json_object_set_new(j, "dtype", jstr_or_null(in->dtype));
    json_object_set_new(j, "device", jstr_or_null(in->device));
    return j;
}

json_t *artifact_to_json(const artifact *a) {
    json_t *root = json_object();
    const art_entry *en = &a->entry;
    json_t *entry = json_object();
    json_object_set_new(entry, "form", json_string(en->form == ART_ENTRY_DEF ? "def" : "runner"));
    json_object_set_new(entry, "line", json_integer(en->line));
    json_object_set_new(entry, "header", jspan(en->header));
    json_object_set_new(entry, "body", jspan(en->body));
    json_object_set_new(entry, "inputs", jlist(&en->inputs));
    if (en->form == ART_ENTRY_RUNNER) {
        json_object_set_new(entry, "runner_instance", json_boolean(en->runner_instance));
        json_object_set_new(entry, "call_bound", json_boolean(en->call_bound));
    }
    json_object_set_new(root, "entry", entry);

    json_t *ks = json_array();
    for (size_t i = 0; i < a->nkernels; i++) json_array_append_new(ks, kernel_json(a, i));
    json_object_set_new(root, "kernels", ks);

    json_t *ls = json_array();
    size_t ntriton = 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        json_array_append_new(ls, launch_json(a, &a->launches[i]));
        ntriton += a->launches[i].kind == ART_L_TRITON;
    }
    json_object_set_new(root, "launches", ls);

    json_t *bufs = json_array(), *sts = json_array(), *unk = json_array();
    for (size_t i = 0; i < a->nstmts; i++) {
        const art_stmt *s = &a->stmts[i];
        json_array_append_new(sts, stmt_json(a, s));
        if (s->kind == ART_ST_ALLOC)
            json_array_append_new(bufs, json_pack("{s:s,s:o,s:o,s:o,s:i}", "name", s->target,
                                                  "shape", jstr_or_null(s->shape), "stride",
                                                  jstr_or_null(s->stride), "dtype",
                                                  jstr_or_null(s->dtype), "line", s->line));
        if (s->kind == ART_ST_UNKNOWN)
            json_array_append_new(unk, json_pack("{s:i,s:o}", "line", s->line, "text", jtext(a, s->span)));
    }
    size_t nbufs = json_array_size(bufs), nunk = json_array_size(unk);
    json_object_set_new(root, "buffers", bufs);
    json_object_set_new(root, "statements", sts);
    json_object_set_new(root, "unknown_statements", unk);

    json_t *ins = json_array();
    for (size_t i = 0; i < a->ninputs; i++) json_array_append_new(ins, input_json(&a->inputs[i]));
    json_object_set_new(root, "inputs", ins);
    json_t *oth = json_array();
    for (size_t i = 0; i < a->nasync_other; i++)
        json_array_append_new(oth, json_pack("{s:i,s:o}", "line", a->async_other[i].line, "text",
                                             jtext(a, a->async_other[i].span)));
    json_object_set_new(root, "async_other", oth);
    json_object_set_new(root, "warnings", jlist(&a->warnings));
    json_object_set_new(root, "counts",
                        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "kernels", (json_int_t)a->nkernels,
                                  "launches", (json_int_t)a->nlaunches, "triton_launches",
                                  (json_int_t)ntriton, "vendor_calls", (json_int_t)(a->nlaunches - ntriton),
                                  "buffers", (json_int_t)nbufs, "unknown", (json_int_t)nunk,
                                  "statements", (json_int_t)a->nstmts));
    return root;
}
