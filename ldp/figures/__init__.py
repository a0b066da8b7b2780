"""The book's figures, one module per group: a frame builder (the tidy frame a figure plots) and a drawing.

Each figure is a function pair: the frame (one row per plotted point, bar or
line vertex; saved beside the image as its CSV by
:func:`ldp.plotting.save_figure`) and a seaborn drawing of exactly that frame.

* :mod:`~ldp.figures.malicious` -- chapter 09, malicious users (issue 22).
"""
