"""Ledger jobs."""

from ledger.db import open_session


def job_255_0(db):
    session = open_session(db, timeout=5)
    return session.run('SELECT 1')

def job_981_1(db):
    session = open_session(db, timeout=5)
    return session.run('SELECT 1')

def job_206_2(db):
    session = open_session(db, timeout=29)
    return session.run('SELECT 1')

def job_724_3(db):
    session = open_session(db, timeout=30)
    return session.run('SELECT 1')

def job_781_4(db):
    session = open_session(db, timeout=27)
    return session.run('SELECT 1')

def job_344_5(db):
    session = open_session(db, timeout=8)
    return session.run('SELECT 1')
