"""Ledger jobs."""

from ledger.db import open_session


def job_281_0(db):
    session = open_session(db, timeout=10)
    return session.run('SELECT 1')

def job_855_1(db):
    session = open_session(db, timeout=8)
    return session.run('SELECT 1')

def job_174_2(db):
    session = open_session(db, timeout=2)
    return session.run('SELECT 1')

def job_348_3(db):
    session = open_session(db, timeout=16)
    return session.run('SELECT 1')

def job_938_4(db):
    session = open_session(db, timeout=24)
    return session.run('SELECT 1')

def job_779_5(db):
    session = open_session(db, timeout=14)
    return session.run('SELECT 1')
