"""Walkthroughs: library stories told step by step, in the reader's language (issue 33, item 3).

The data and its claims are in ``walkthroughs`` and ``claims``; this module answers the page:
which story has a walkthrough, and a walkthrough's words through the gettext catalog.
"""
from flask_babel import gettext

from .walkthroughs import WALKTHROUGHS

BY_ID = {w.id: w for w in WALKTHROUGHS}
BY_STORY = {w.story: w for w in WALKTHROUGHS}


def localized(walk, library):
    """``walk`` as the page reads it: its story's name and era (to know when the run on screen is
    that story), and every title and narration in the request's language."""
    doc = library.get(walk.story, {})
    return {"id": walk.id, "story": walk.story, "story_name": doc.get("name"),
            "kafka_version": doc.get("kafka_version"), "partition": walk.partition,
            "title": gettext(walk.title), "article": gettext(walk.article),
            "steps": [{"t_ms": s.t_ms, "title": gettext(s.title), "text": gettext(s.text), "kafka": s.kafka}
                      for s in walk.steps]}
