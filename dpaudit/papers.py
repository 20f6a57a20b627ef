"""The papers the toolkit implements or checks, cited as people cite them.

A :class:`Citation` holds what a reference list holds — authors, year, title, venue, an arXiv
id and a volume or page range — and gives the two forms the toolkit prints:

* :attr:`Citation.short`, ``"Ou, Avella Medina & Cummings 2024"``: up to three authors are
  named, four or more are ``"First et al."``; ``dpaudit list`` shows it in its paper column and
  algorithm titles use it;
* ``str(citation)``, the full reference (``dpaudit run ALG --help``, ``docs/papers.md``).

:meth:`Citation.at` names a place in the paper (``"Ou, Avella Medina & Cummings (2024),
Theorem 3"``), which is how a published claim says where it is published
(:class:`dpaudit.declaration.PublishedClaim`).

Every field of the constants below was read off the paper itself (title page, running head)
or off the reference lists of the papers that cite it; ``docs/papers.md`` says what the toolkit
does with each. This module imports nothing beyond the standard library: declaring an algorithm
(:mod:`bandits.algorithm`) imports it and must stay cheap.

Example:
    >>> OU_2024.short
    'Ou, Avella Medina & Cummings 2024'
    >>> OU_2024.at("Theorem 3")
    'Ou, Avella Medina & Cummings (2024), Theorem 3'
    >>> CHEN_2020.short
    'Chen et al. 2020'
    >>> print(AZIZE_BASU_2022)  # doctest: +NORMALIZE_WHITESPACE
    Azize, A. & Basu, D. (2022). When Privacy Meets Partial Information: A Refined Analysis of
    Differentially Private Bandits. Advances in Neural Information Processing Systems (NeurIPS 2022),
    vol. 35, pp. 32199–32210. arXiv:2209.02570.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Citation",
    "ALL",
    # the five papers the toolkit was built from
    "CHANDAK_HU_HEGDE_2023",
    "WANG_2021",
    "HU_2024",
    "CHEN_2020",
    "OU_2024",
    # peers beyond the five papers
    "HU_2025",
    # baselines and the mechanisms the algorithms are built on
    "HU_HEGDE_2022",
    "SAJED_SHEFFET_2019",
    "AZIZE_BASU_2022",
    "AUER_2002",
    "AGRAWAL_GOYAL_2012",
    "CHEN_2016",
    "KVETON_2015",
    "KVETON_2014",
    "WANG_CHEN_2018",
    "CHAN_SHI_SONG_2011",
    "DWORK_2010",
]


def _initials(given: str) -> str:
    """``"Nishant A."`` → ``"N. A."``, ``"T-H Hubert"`` → ``"T.-H. H."``."""
    return " ".join("-".join(part[0] + "." for part in word.split("-") if part) for word in given.split())


@dataclass(frozen=True)
class Citation:
    """One paper as a reference list gives it.

    Attributes:
        authors: every author in the paper's order, each ``"Surname, Given names"`` (the part
            before the comma is what short citations print: ``"Avella Medina, Marco"``).
        year: the year of the version the toolkit follows.
        title: the paper's title, capitalised as on its title page.
        venue: where it appeared (``"International Conference on Machine Learning (ICML 2020)"``,
            a journal's name), or None for a preprint only.
        arxiv: the arXiv identifier (``"2006.00706"``), if any.
        extra: volume, issue and pages as a reference list gives them (``"PMLR 238"``,
            ``"47(2–3):235–256"``), or a note on the version (no URLs).
    """

    authors: tuple[str, ...]
    year: int
    title: str
    venue: str | None = None
    arxiv: str | None = None
    extra: str | None = None

    def __post_init__(self) -> None:
        if not self.authors or not all(isinstance(a, str) and a.strip() for a in self.authors):
            raise ValueError("a citation needs at least one author")
        if not all("," in a for a in self.authors):
            raise ValueError(f"authors are written 'Surname, Given names': {self.authors}")
        if not self.title.strip():
            raise ValueError("a citation needs a title")
        if self.venue is None and self.arxiv is None:
            raise ValueError(f"{self.title!r}: a preprint needs its arXiv id")

    @property
    def surnames(self) -> tuple[str, ...]:
        return tuple(a.split(",", 1)[0].strip() for a in self.authors)

    @property
    def names(self) -> str:
        """``"Azize & Basu"``, ``"Ou, Avella Medina & Cummings"``, ``"Chen et al."`` (4+ authors)."""
        s = self.surnames
        if len(s) == 1:
            return s[0]
        if len(s) <= 3:
            return ", ".join(s[:-1]) + " & " + s[-1]
        return f"{s[0]} et al."

    @property
    def short(self) -> str:
        """The short citation: ``"Hu et al. 2024"``."""
        return f"{self.names} {self.year}"

    @property
    def textual(self) -> str:
        """The citation as the subject of a sentence: ``"Hu et al. (2024)"``."""
        return f"{self.names} ({self.year})"

    def at(self, place: str) -> str:
        """A place in the paper: ``"Hu et al. (2024), Theorem 2"``."""
        place = place.strip()
        return f"{self.textual}, {place}" if place else self.textual

    def __str__(self) -> str:
        people = []
        for author in self.authors:
            surname, given = (p.strip() for p in author.split(",", 1))
            people.append(f"{surname}, {_initials(given)}" if given else surname)
        who = people[0] if len(people) == 1 else ", ".join(people[:-1]) + " & " + people[-1]
        text = f"{who} ({self.year}). {self.title}."
        if self.venue is None:  # a preprint
            text += f" arXiv preprint arXiv:{self.arxiv}" + (f" ({self.extra})." if self.extra else ".")
            return text
        text += " " + ", ".join([self.venue] + ([self.extra] if self.extra else [])) + "."
        if self.arxiv:
            text += f" arXiv:{self.arxiv}."
        return text


# --------------------------------------------------------------------------------------------
# The five papers the toolkit was built from (their algorithms are registered for 'dpaudit run')

CHANDAK_HU_HEGDE_2023 = Citation(
    authors=("Chandak, Kushagra", "Hu, Bingshan", "Hegde, Nidhi"),
    year=2023,
    title="Differentially Private Algorithms for Efficient Online Matroid Optimization",
    venue="Conference on Lifelong Learning Agents (CoLLAs 2023)",
    extra="PMLR 232, pp. 66–88",
)
"""DPUCB-MAT and DPTS-MAT (``dpucb-mat``, ``dpts-mat``); baselines OMM and CTS-Gaussian."""

WANG_2021 = Citation(
    authors=("Wang, Kun", "Dong, Jing", "Wang, Baoxiang", "Li, Shuai", "Shao, Shuo"),
    year=2021,
    title="Cascading Bandit under Differential Privacy",
    arxiv="2105.11126",
)
"""Cascading UCB under DP and LDP (``cascade-*``) and CUCB under LDP (``cucb-ldp-gaussian``)."""

HU_2024 = Citation(
    authors=("Hu, Bingshan", "Huang, Zhiming", "Mehta, Nishant A.", "Hegde, Nidhi"),
    year=2024,
    title="Near-Optimal Algorithms for Differentially Private Online Learning in a Stochastic Environment",
    arxiv="2102.07929",
    extra="v3",
)
"""Anytime-Lazy-UCB, Lazy-DP-TS (``lazy-ucb``, ``lazy-dp-ts``), RNM-FTNL and naive FTNL (full
information). v1 (2021, Hu, Huang & Mehta) had FTNL and Anytime-Lazy-UCB only; the version the
toolkit follows adds Lazy-DP-TS and cites work of 2023."""

CHEN_2020 = Citation(
    authors=(
        "Chen, Xiaoyu",
        "Zheng, Kai",
        "Zhou, Zixin",
        "Yang, Yunchang",
        "Chen, Wei",
        "Wang, Liwei",
    ),
    year=2020,
    title="(Locally) Differentially Private Combinatorial Semi-Bandits",
    venue="International Conference on Machine Learning (ICML 2020)",
    arxiv="2006.00706",
    extra="PMLR 119, pp. 1757–1767",
)
"""CUCB-LDP1, CUCB-LDP2 and CUCB-DP (``cucb-ldp1``, ``cucb-ldp2``, ``cucb-dp``)."""

OU_2024 = Citation(
    authors=("Ou, Tingting", "Avella Medina, Marco", "Cummings, Rachel"),
    year=2024,
    title="Thompson Sampling Itself is Differentially Private",
    venue="International Conference on Artificial Intelligence and Statistics (AISTATS 2024)",
    arxiv="2407.14879",
    extra="PMLR 238",
)
"""Gaussian Thompson sampling with pre-pulls b and variance factor c (``ts``); its GDP, RDP and
report-noisy-max theorems (``dpaudit epsilon``, ``dpaudit audit``)."""

# --------------------------------------------------------------------------------------------
# Peers beyond the five papers

HU_2025 = Citation(
    authors=(
        "Hu, Bingshan",
        "Huang, Zhiming",
        "Zhang, Tianyue H.",
        "Lécuyer, Mathias",
        "Hegde, Nidhi",
    ),
    year=2025,
    title="Connecting Thompson Sampling and UCB: Towards More Efficient Trade-offs Between Privacy and "
    "Regret",
    venue="International Conference on Machine Learning (ICML 2025)",
    arxiv="2505.02383",
)
"""DP-TS-UCB (``dp-ts-ucb``): Gaussian samples from epoch means, at most φ per arm and epoch, then
their maximum reused as an optimistic index; its GDP theorem (Theorem 4.4)."""

# --------------------------------------------------------------------------------------------
# Baselines and the building blocks the algorithms name

HU_HEGDE_2022 = Citation(
    authors=("Hu, Bingshan", "Hegde, Nidhi"),
    year=2022,
    title="Near-Optimal Thompson Sampling-based Algorithms for Differentially Private Stochastic Bandits",
    venue="Conference on Uncertainty in Artificial Intelligence (UAI 2022)",
    extra="PMLR 180, pp. 844–852",
)
"""Where Lazy-DP-TS first appeared (Hu et al. 2024 restate it, and the toolkit follows them)."""

SAJED_SHEFFET_2019 = Citation(
    authors=("Sajed, Touqir", "Sheffet, Or"),
    year=2019,
    title="An Optimal Private Stochastic-MAB Algorithm Based on Optimal Private Stopping Rule",
    venue="International Conference on Machine Learning (ICML 2019)",
    arxiv="1905.09383",
    extra="PMLR 97, pp. 5579–5588",
)
"""DP-SE, private successive elimination (``dp-se``)."""

AZIZE_BASU_2022 = Citation(
    authors=("Azize, Achraf", "Basu, Debabrota"),
    year=2022,
    title=(
        "When Privacy Meets Partial Information: A Refined Analysis of Differentially Private Bandits"
    ),
    venue="Advances in Neural Information Processing Systems (NeurIPS 2022)",
    arxiv="2209.02570",
    extra="vol. 35, pp. 32199–32210",
)
"""AdaP-UCB and AdaP-KLUCB (``adap-ucb``, ``adap-klucb``)."""

AUER_2002 = Citation(
    authors=("Auer, Peter", "Cesa-Bianchi, Nicolò", "Fischer, Paul"),
    year=2002,
    title="Finite-time Analysis of the Multiarmed Bandit Problem",
    venue="Machine Learning",
    extra="47(2–3):235–256",
)
"""UCB1 (``ucb1``); also the confidence bonus of OMM, CascadeUCB1 and the private UCB variants."""

AGRAWAL_GOYAL_2012 = Citation(
    authors=("Agrawal, Shipra", "Goyal, Navin"),
    year=2012,
    title="Analysis of Thompson Sampling for the Multi-armed Bandit Problem",
    venue="Conference on Learning Theory (COLT 2012)",
    extra="JMLR W&CP 23, pp. 39.1–39.26",
)
"""Beta-Bernoulli Thompson sampling (``beta-ts``)."""

CHEN_2016 = Citation(
    authors=("Chen, Wei", "Wang, Yajun", "Yuan, Yang", "Wang, Qinshi"),
    year=2016,
    title="Combinatorial Multi-Armed Bandit and Its Extension to Probabilistically Triggered Arms",
    venue="Journal of Machine Learning Research",
    extra="vol. 17",
)
"""CUCB, the non-private combinatorial semi-bandit reference (``cucb``): bonus sqrt(3 ln t/(2n))."""

KVETON_2015 = Citation(
    authors=("Kveton, Branislav", "Szepesvári, Csaba", "Wen, Zheng", "Ashkan, Azin"),
    year=2015,
    title="Cascading Bandits: Learning to Rank in the Cascade Model",
    venue="International Conference on Machine Learning (ICML 2015)",
    arxiv="1502.02763",
    extra="PMLR 37, pp. 767–776",
)
"""CascadeUCB1 (``cascade-ucb``) and the cascade model."""

KVETON_2014 = Citation(
    authors=("Kveton, Branislav", "Wen, Zheng", "Ashkan, Azin", "Eydgahi, Hoda", "Eriksson, Brian"),
    year=2014,
    title="Matroid Bandits: Fast Combinatorial Optimization with Learning",
    venue="Conference on Uncertainty in Artificial Intelligence (UAI 2014)",
    arxiv="1403.5045",
)
"""OMM, optimistic matroid maximization (``omm``)."""

WANG_CHEN_2018 = Citation(
    authors=("Wang, Siwei", "Chen, Wei"),
    year=2018,
    title="Thompson Sampling for Combinatorial Semi-Bandits",
    venue="International Conference on Machine Learning (ICML 2018)",
    extra="PMLR 80",
)
"""CTS, combinatorial Thompson sampling: the Gaussian-prior version is the matroid paper's
non-private baseline (``cts-gaussian``), cited there as Wang & Chen (2018)."""

CHAN_SHI_SONG_2011 = Citation(
    authors=("Chan, T-H Hubert", "Shi, Elaine", "Song, Dawn"),
    year=2011,
    title="Private and Continual Release of Statistics",
    venue="ACM Transactions on Information and System Security",
    extra="14(3):1–24",
)
"""The hybrid (logarithmic + binary) counter of the cascading DP algorithm."""

DWORK_2010 = Citation(
    authors=("Dwork, Cynthia", "Naor, Moni", "Pitassi, Toniann", "Rothblum, Guy N."),
    year=2010,
    title="Differential Privacy under Continual Observation",
    venue="ACM Symposium on Theory of Computing (STOC 2010)",
    extra="pp. 715–724",
)
"""Tree aggregation (the binary mechanism) of CUCB-DP."""

ALL: tuple[Citation, ...] = (
    CHANDAK_HU_HEGDE_2023,
    WANG_2021,
    HU_2024,
    CHEN_2020,
    OU_2024,
    HU_2025,
    HU_HEGDE_2022,
    SAJED_SHEFFET_2019,
    AZIZE_BASU_2022,
    AUER_2002,
    AGRAWAL_GOYAL_2012,
    CHEN_2016,
    KVETON_2015,
    KVETON_2014,
    WANG_CHEN_2018,
    CHAN_SHI_SONG_2011,
    DWORK_2010,
)
"""Every citation above, the five source papers first, then their peers."""
