"""The report rendered from the runs: the context every template reads, the figures it shows and their numbers,
and the files written (REPORT.md, DETAILS.md, the appendices, the mirror page)."""

import collections
import dataclasses
import functools
import itertools
import pathlib
import re
import textwrap

import jinja2

from replication import claims
from replication.claims import design
from replication.claims.answer_figure import ANSWER
from replication.claims.mechanism import DECOMPOSITION, decomposition_run
from replication.claims.timed_words import slope_text
from replication.core import model_code, optimum, paths, runs
from replication.core.format import code_span, inline, number, relative, sci, share_range, times, um
from replication.core.mirror import mirror_table, side_by_side_page
from replication.core.objectives import BY_NAME
from replication.core.paths import FIGURES, PAPER, TEMPLATES
from replication.core.plotting import appendix_folder
from replication.core.profiles import PROFILES
from replication.core.results import (
    add_to_manifest,
    keep_only_what_was_made,
    refuse_overwriting_foreign,
    write_text_if_changed,
    writing_into,
)
from replication.core.simulation import (
    STOPPED_AT_OPTIMUM,
    identifiable,
    rank_deficiency,
)
from replication.report import load
from replication.report.cells import CLAIMS, RULES, run_code
from replication.report.figures import GPU_HISTORY, gpu_history, paper_figures_run
from replication.report.first_screen import claim_table, history_rows, mechanism
from replication.report.retire import read_retired
from replication.report.screen import design_rows, first_screen, plain_title
from replication.report.sections import (
    JAX_POINTS,
    ReportContext,
    ShownFigure,
    against_jax,
    against_scipy_bfgs,
    run_sections,
    shown,
)
from replication.report.sensitivity import sensitivity_table
from replication.studies.closure.maps import NOISE
from replication.studies.closure.read import closure_beyond, closure_shown, closure_summaries
from replication.studies.crosscheck.figures import AGREEMENT, EXAMPLE_FIT, crosscheck_run
from replication.studies.real_maps.act_on import act_on_row, holds_sentence
from replication.studies.real_maps.figures import RESIDUALS, SURFACE, real_maps_run
from replication.studies.real_maps.read import findings as real_maps_findings
from replication.studies.real_maps.read import pyoof_lines
from replication.studies.real_maps.speedups import ratio_short, ratio_text, simulated_beside
from replication.studies.retrieval.figures import RETRIEVAL, retrieval_run
from replication.studies.sweep import read as sweep_read
from replication.studies.sweep.figures import (
    SPEEDUP_VS_GRID_SIZE,
    TIME_VS_GRID_SIZE,
    TIME_VS_ZERNIKE_ORDER,
)


def load_runs(own_runs, reference=None):
    """Your runs (in the order given), then every reference run (in name order)."""
    own = [load.load_run(folder, own=True) for folder in own_runs]
    return load.tell_apart(own + [load.load_run(folder, own=False) for folder in runs.reference_runs(reference)])


def main_figures(all_runs, figures, output):
    """The main report's figures that figures.draw_all draws for these runs: (path, caption); the paper's two from
    the run that answers the claims, then the GPU history's own, apart."""
    shown_run = paper_figures_run(all_runs)
    decomposed = decomposition_run(all_runs)
    checked = crosscheck_run(all_runs)
    chosen = []
    if shown_run is not None:
        chosen += [(TIME_VS_GRID_SIZE, shown_run), (TIME_VS_ZERNIKE_ORDER, shown_run)]
    history = [shown_figure(GPU_HISTORY, appendix_folder(figures, run), output, run) for run in gpu_history(all_runs)]
    rest = [(SPEEDUP_VS_GRID_SIZE,)] if shown_run is not None else []
    if decomposed is not None:
        rest.append((DECOMPOSITION, decomposed))
    if checked is not None:
        if (checked.folder / "crosscheck" / "example.npz").exists():
            rest.append((EXAMPLE_FIT, checked))
        rest.append((AGREEMENT, checked))
    for claim in claims.CLAIMS:  # the figures of claims added with their own (claims.ADDED)
        shows = claim.shows(all_runs) if claim.figure is not None else None
        if shows is not None:
            rest.append((claim.figure, *shows))
    return ([shown_figure(figure, figures, output, *shown) for figure, *shown in chosen] + history
            + [shown_figure(figure, figures, output, *shown) for figure, *shown in rest])


def shown_figure(figure, figures, output, *shown):
    """A figure as the report shows it: its path from output and its caption (unnumbered: number_figures numbers
    the main report's in order), from what it draws."""
    return ShownFigure(relative(figure.path(figures), output), figure.caption(*shown))


def mirror_commit(all_runs, codes):
    """The commit whose code the readability section shows: the newest run's last whose code git (or, in a source
    archive, the committed rendering's cache) can give; None without one."""
    for run in sorted(all_runs, key=lambda run: (run.own, run.info.created), reverse=True):
        for commit in reversed(codes[run.folder].commits):
            if model_code.sources_or_cached(commit):
                return commit
    return None


def mirror_sources(all_runs, codes):
    """The code the readability section shows (C6's modules and the side-by-side page): that of mirror_commit (so
    that rewording a tree does not change the report); the working tree without one."""
    commit = mirror_commit(all_runs, codes)
    return model_code.sources_or_cached(commit) if commit else model_code.working_sources()


def unidentifiable(all_runs):
    """The points of the profiles and of the runs' records that make_setup refuses as not identifiable, with
    the rank of their design and the parameter count."""
    keys = {key for profile in PROFILES.values() for key in profile.unidentifiable()}
    keys |= {key for run in all_runs for points in run.series.values() for key in points
             if not identifiable(*key)}
    return [{"npix": npix, "nzern": nzern, "rank": error.rank, "exact": error.exact, "nparams": error.nparams}
            for npix, nzern in sorted(keys) for error in [rank_deficiency(npix, nzern)]]


def context(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """Everything the main template shows, read from the run folders; and each run's appendix context."""
    all_runs = load_runs(own_runs, reference)
    main = model_code.identity(model_code.working_sources())
    codes = {run.folder: run_code(run, main) for run in all_runs}
    sources = mirror_sources(all_runs, codes)
    mirror_rows, mirror_total, identical = mirror_table(sources)
    judged = [run for run in all_runs if load.judges_claims(run)]
    tables = [claim_table(judged, objective) for objective in BY_NAME.values()
              if not objective.gamma_from_noise or any(run.judged(objective)[0] for run in judged)]
    sections = [dataclasses.replace(run_sections(run, figures, output / "runs"), code=codes[run.folder],
                                    old_rule=bool(run.series) and not sweep_read.timed_to_targets(run.series))
                for run in all_runs]
    shown_run = decomposition_run(all_runs)
    decomposed = next((section for run, section in zip(all_runs, sections, strict=True) if run is shown_run), None)
    closures = closure_summaries(all_runs)
    return number_figures(ReportContext(
        first_screen=first_screen(judged, codes),
        older_rule=history_rows(tables[0], judged, sections), design=design_rows(all_runs),
        retired=read_retired(pathlib.Path(reference or paths.REFERENCE).parent / "retired.jsonl"),
        mechanism=mechanism(decomposed, shown_run),
        environments=[environment for run in all_runs for environment in load.run_environments(run)],
        mirror_commit=mirror_commit(all_runs, codes), answer_figure=answer_figure_shown(all_runs, figures, output),
        claim_tables=tables, claims=CLAIMS, rules=RULES, judged_runs=judged, independence=machine_kinds(all_runs),
        sensitivity=sensitivity_table(judged, sections), runs=sections,
        claim_runs=[s for run, s in zip(all_runs, sections, strict=True) if load.judges_claims(run)],
        decomposed=decomposed, unidentifiable=unidentifiable(all_runs), mirror_rows=mirror_rows,
        mirror_total=mirror_total, identical=identical, mirror_sources=sources, profiles=PROFILES,
        figures=main_figures(all_runs, figures, output), same_solution=claims.SAME_SOLUTION_STDERR,
        stopped_at_optimum=STOPPED_AT_OPTIMUM, target_se=optimum.TARGET, optimum_tol=optimum.OPTIMUM_TOL,
        model=relative(PAPER / "MODEL.md", output), reference_folder=shown(reference or paths.REFERENCE),
        own=any(run.own for run in all_runs),
        retrievals=[section.retrieval for section in sections if section.retrieval],
        against_jax=[line for line in (against_jax(run, codes[run.folder]) for run in all_runs) if line],
        against_scipy=[line for line in (against_scipy_bfgs(run) for run in all_runs) if line],
        closure=closure_shown(closures), closure_beyond=closure_beyond(closures), srt_noise=NOISE,
        jax_points=JAX_POINTS,
        retrieval_figure=retrieval_figure(all_runs, figures, output),
        real_maps=real_maps_shown(all_runs, sections, figures, output)))


def number_figures(values: ReportContext) -> ReportContext:
    """Number the main report's figures in the order a reader meets them (the answer's, the paper's figures, the
    cold starts', the real maps'): each caption's 'Figure N: ' written here, whatever file it comes from."""
    counter = itertools.count(1)

    def numbered(figure):
        return figure and figure.numbered(next(counter))

    answer, figures = numbered(values.answer_figure), [numbered(figure) for figure in values.figures]
    retrieval = numbered(values.retrieval_figure)
    real_maps = values.real_maps and dataclasses.replace(
        values.real_maps, figures=[numbered(figure) for figure in values.real_maps.figures])
    return dataclasses.replace(values, answer_figure=answer, figures=figures, retrieval_figure=retrieval,
                               real_maps=real_maps)


def real_maps_shown(all_runs, sections, figures, output):
    """The main report's real-maps section: that of the run figures.real_maps_run picks, with its findings and
    figures 9 and 10; None where no run has real-maps fits."""
    shown_run = real_maps_run(all_runs)
    if shown_run is None:
        return None
    section = next(s.real_maps for run, s in zip(all_runs, sections, strict=True) if run is shown_run)
    if section is None:
        return None
    kind = (shown_run.machine.cpu, shown_run.machine.cpu_count)
    answering = design.answering(all_runs)
    same_machine = sorted(all_runs, key=lambda run: (run is not shown_run, run is not answering,
                                                     (run.machine.cpu, run.machine.cpu_count) != kind))
    beside = next(((run, found) for run in same_machine if (found := simulated_beside(run))), None)
    simulated = beside and dataclasses.replace(
        beside[1], title=beside[0].title,
        measure="time to solution" if sweep_read.timed_to_targets(beside[0].series) else "the sweep's time to stop")
    return dataclasses.replace(
        section, title=shown_run.title, appendix=f"runs/{shown_run.appendix_name}.md", simulated=simulated,
        findings=real_maps_findings(section), pyoof=pyoof_lines(section),
        terms=any(s.source and s.source.terms_effect for s in section.sources),
        act_on=[act_on_row(s.short, s.source) for s in section.sources if s.source],
        holds=holds_sentence([(s.short, s.source) for s in section.sources if s.source]),
        figures=[shown_figure(figure, figures, output, shown_run) for figure in (SURFACE, RESIDUALS)])


def machine_kinds(all_runs):
    """The kinds of machine (CPU model, cores, GPU) that more than one run was measured on: [{kind, count}], most
    runs first."""
    counts = collections.Counter(
        f"{run.machine.cpu}, {run.machine.cpu_count} cores, GPU {run.machine.gpu or 'none'}" for run in all_runs)
    return [{"kind": kind, "count": count} for kind, count in counts.most_common() if count > 1]


def answer_figure_shown(all_runs, figures, output):
    """The answer's figure (figures.answer_figure) with its caption, where a run has a sweep; else None."""
    if not any(run.series for run in all_runs):
        return None
    shown = shown_figure(ANSWER, figures, output, all_runs)
    return shown.caption and dataclasses.replace(shown, caption=shown.caption.rstrip("."))


def retrieval_figure(all_runs, figures, output):
    """Figure 8 (retrieval from a cold start) with its caption, where a run has a retrieval; else None."""
    shown_run = retrieval_run(all_runs)
    if shown_run is None:
        return None
    return shown_figure(RETRIEVAL, figures, output, shown_run)


LINE_START = re.compile(r" (?=[<>#|]|[-+*] |\d+[.)] )")
"""A space before what Markdown reads as structure at a line's start: a quote ('>'), a tag, a heading, a table
row, a list item."""


def wordwrap(text, width=79, break_long_words=True, wrapstring="\n", break_on_hyphens=True):
    """jinja's wordwrap, except that no line starts with what Markdown reads as structure (LINE_START): such a word
    stays on the line of the word before it."""
    glued = LINE_START.sub("\x00", str(text))
    lines = [wrapstring.join(textwrap.wrap(line, width, break_long_words=break_long_words, break_on_hyphens=
                                           break_on_hyphens)) for line in glued.splitlines()]
    return wrapstring.join(lines).replace("\x00", " ")


@functools.cache
def environment():
    """The jinja2 environment of the report's templates (made once: it compiles each template once, and again
    only where the template file changed)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(number=number, times=times, sci=sci, all=all, ratio_text=ratio_text, ratio_short=ratio_short,
                       slope=slope_text, share_range=share_range, text=inline, code=code_span, wordwrap=wordwrap,
                       um=um)
    return env


def render_all(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """{path relative to output: Markdown text}: REPORT.md and runs/<run>.md for each run shown."""
    return rendered(context(own_runs, reference, output, figures), own_runs, output)


PAGES = ("REPORT.md", "DETAILS.md", "REAL_MAPS.md", "METHODS.md")
"""The report's pages, each from its template: the answer, every verdict, the real maps in detail, the methods."""


def rendered(values, own_runs, output):
    """The texts of render_all from the context's values."""
    env = environment()
    texts = {name: env.get_template(f"{name}.j2").render(**vars(values)) for name in PAGES}
    for run in values.runs:
        texts[run.appendix] = env.get_template("RUN.md.j2").render(
            run=run, profiles=values.profiles, same_solution=values.same_solution,
            stopped_at_optimum=values.stopped_at_optimum, report=relative(output / "REPORT.md", output / "runs"))
    texts[MIRROR_PAGE] = side_by_side_page(values.mirror_sources)
    if output.resolve() == PAPER.resolve() and not own_runs:
        texts[model_code.CACHE_NAME] = model_code.cache_text(values.environments, values.mirror_commit)
    return texts


MIRROR_PAGE = "mirror_diff.html"
"""The side-by-side page of the two trees, beside REPORT.md."""


def render(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """The main report's Markdown text (REPORT.md) for your runs (none: the committed report)."""
    return render_all(own_runs, reference, output, figures)["REPORT.md"]


def render_command(own_runs, reference, output, figures, check=False):
    """Write (or with check, compare) REPORT.md, the runs' appendices and the side-by-side diff; prints the
    claims tables, or, with runs of yours, each claim's value and verdict in your run."""
    values = context(own_runs, reference, output, figures)
    texts = rendered(values, own_runs, output)
    committed = not own_runs and output.resolve() == PAPER.resolve()
    if check:
        stale = [name for name, text in texts.items()
                 if not (output / name).exists() or (output / name).read_text() != text]
        for name in texts:
            print(f"{output / name}: {'DIFFERS FROM' if name in stale else 'matches'} a fresh rendering")
        return 1 if stale else 0
    guarded = not committed and not runs.is_run_folder(output)  # a folder you named: its files may be a person's
    if guarded:
        present = [output / name for name in texts if (output / name).exists() or (output / name).is_symlink()]
        refuse_overwriting_foreign("--output", output, [(output, [p for p in present if p.parent == output]),
                                                        (output / "runs", [p for p in present if p.parent != output])])
    with writing_into(output, figures, committed=committed):
        for name, text in texts.items():
            (output / name).parent.mkdir(parents=True, exist_ok=True)
            write_text_if_changed(output / name, text)
        if guarded:
            add_to_manifest(output, [output / name for name in texts if "/" not in name])
        appendices = [output / name for name in texts if name.startswith("runs/")]
        _, left = keep_only_what_was_made(output / "runs", appendices, (output / "runs").glob("*.md"))
    if left:
        print(f"left {len(left)} file(s) under {output / 'runs'} that no report wrote (first: {left[0].name})")
    print(your_runs_summary(values, output) if own_runs else claims_summary(texts["DETAILS.md"]))
    print(f"wrote {', '.join(str(output / name) for name in PAGES)}, {len(appendices)} appendix(es) under "
          f"{output / 'runs'} and {output / MIRROR_PAGE}")
    missing = missing_figures(texts, output)
    if missing:
        print(f"{len(missing)} figure(s) the report shows are not drawn under {figures} yet (first: {missing[0]}); "
              f"draw them with the same options: python -m replication figures ...")
    return 0


IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")
"""A markdown image's path."""


def missing_figures(texts, output):
    """The figure files the rendered pages link to (paths relative to each page) that do not exist."""
    linked = {((output / name).parent / path).resolve() for name, text in texts.items() if name.endswith(".md")
              for path in IMAGE.findall(text)}
    return sorted(str(path) for path in linked if not path.exists())


MARKUP = re.compile(r"\*\*|\[(\d+)\]|<[^>]+>")
"""Markdown emphasis, note marks and tags, left out of the terminal's lines."""


def your_runs_summary(values, output):
    """At most 15 lines for the terminal after a run of yours: the first screen's answer of your run (its machine,
    each paper claim's value and verdict under each objective it measured, the load beside a timing verdict), then
    where the report is."""
    lines = []
    for answer in values.first_screen.answers:
        if not answer.run.own:
            continue
        machine = answer.run.machine
        lines.append(f"Your run {answer.run.folder.name}: {machine.cpu} ({machine.cpu_count} cores), GPU "
                     f"{machine.gpu or 'none'}; under " + " | ".join(plain_title(o) for o in answer.objectives) + ":")
        for key, judged in answer.rows.items():
            loaded = any(j.loaded and j.claim.timed and j.measured for j in judged)
            cells = " | ".join(MARKUP.sub("", j.text.removesuffix(" (loaded machine)")) for j in judged)
            lines.append(f"  {key} {judged[0].claim.short}: {cells}"
                         + (" (on a loaded machine: may read low)" if loaded else ""))
    if not lines:
        lines.append("None of your runs has a sweep the claims judge yet (nox -s replicate measures one).")
    return "\n".join([*lines[:13], f"Report: {output / 'REPORT.md'} (every verdict: {output / 'DETAILS.md'})"])


def claims_summary(text):
    """The claims tables of a rendered report (one per objective), for the terminal."""
    lines = text.splitlines()
    tables = []
    for start, line in enumerate(lines):
        if line.startswith("| Claim |") and not line.startswith(("| Claim | The paper", "| Claim | Rule |")):
            end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
            title = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].startswith("#")), "")
            tables.append("\n".join([title.lstrip("# "), *lines[start:end]]))
    return "\n\n".join(tables)
