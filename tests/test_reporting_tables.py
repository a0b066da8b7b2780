"""Tables for the page (ldp.book.plotting.tables): one number format, flat headers, no index column."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.plotting.tables import compact_table, format_number, table_view


@pytest.mark.parametrize(("value", "text"), [(4222.6425, "4,223"), (0.000123456, "0.000123"), (3.16e7, "3.16e+07"),
                                             (np.int64(1048576), "1,048,576"), (float("nan"), "–"), (0.0, "0"),
                                             (-0.2220, "-0.222"), (True, "True"), ("ε/3", "ε/3")])
def test_format_number(value, text):
    assert format_number(value) == text


def test_compact_table_flattens_headers_and_hides_the_index():
    frame = pd.DataFrame([[1.23456, 2]], columns=pd.MultiIndex.from_tuples([("F1", "mean"), ("runs", "")]))
    html = compact_table(frame).to_html()
    assert "F1 mean" in html and ">1.23<" in html and "nan" not in html.lower()


def test_table_view_is_compact_and_flat():
    frame = pd.DataFrame({"protocol": ["PEM", "SPM"], "epsilon": [0.9, 2.0], "f1": [0.123456, np.nan],
                          "released": [4372.333, 13.0], "runs": [3, 3]}).set_index(["protocol", "epsilon"])
    html = table_view(frame).to_html()
    assert "0.123" in html and "4,372" in html and "e+" not in html and "nan" not in html.lower()
    assert html.count("<tr>") == 1 + len(frame)  # one header row, then the data: no empty header rows
    assert "0.9" in html and ">PEM<" in html  # the index levels became columns
