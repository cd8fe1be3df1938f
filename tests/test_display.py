"""Display helpers of the book: tables."""

from inference_math.book.display import is_number, markdown_table


def test_tables_align_numbers_right_and_text_left():
    table = markdown_table(["model", "tok/s", "diff"], [["Llama 3 8B", "1,234", "−0.5%"],
                                                         ["GPT-4", "—", "+1.2%"]])
    assert table.splitlines()[1] == "|:---|---:|---:|"
    assert [is_number(c) for c in ("$2.10", "3.1×", "1e-3", "Llama", "8B", "**12**")] == [
        True, True, True, False, False, True]
