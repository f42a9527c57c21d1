"""Building blocks of the independent plan checker (:mod:`toposolve.check.checker`).

Nothing here imports the engines, the problem compiler or the topology arrays: the checker
re-derives every rule from the instance model so that a bug shared with an engine cannot hide.
"""
