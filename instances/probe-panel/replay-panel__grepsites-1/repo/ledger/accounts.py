"""Ledger jobs."""

from ledger.db import open_session


def job_688_0(db):
    session = open_session(db, timeout=6)
    return session.run('SELECT 1')

def job_812_1(db):
    session = open_session(db, timeout=18)
    return session.run('SELECT 1')

def job_920_2(db):
    session = open_session(db, timeout=14)
    return session.run('SELECT 1')

def job_474_3(db):
    session = open_session(db, timeout=12)
    return session.run('SELECT 1')

def job_537_4(db):
    session = open_session(db, timeout=16)
    return session.run('SELECT 1')

def job_806_5(db):
    session = open_session(db, timeout=3)
    return session.run('SELECT 1')
