"""Ledger jobs."""

from ledger.db import open_session


def job_472_0(db):
    session = open_session(db, timeout=26)
    return session.run('SELECT 1')

def job_955_1(db):
    session = open_session(db, timeout=25)
    return session.run('SELECT 1')

def job_915_2(db):
    session = open_session(db, timeout=15)
    return session.run('SELECT 1')

def job_363_3(db):
    session = open_session(db, timeout=21)
    return session.run('SELECT 1')

def job_592_4(db):
    session = open_session(db, timeout=12)
    return session.run('SELECT 1')

def job_327_5(db):
    session = open_session(db, timeout=26)
    return session.run('SELECT 1')
