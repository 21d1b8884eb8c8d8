"""Ledger jobs."""

from ledger.db import open_session


def job_139_0(db):
    session = open_session(db, timeout=23)
    return session.run('SELECT 1')

def job_160_1(db):
    session = open_session(db, timeout=12)
    return session.run('SELECT 1')

def job_988_2(db):
    session = open_session(db, timeout=20)
    return session.run('SELECT 1')

def job_359_3(db):
    session = open_session(db, timeout=2)
    return session.run('SELECT 1')

def job_394_4(db):
    session = open_session(db, timeout=3)
    return session.run('SELECT 1')

def job_782_5(db):
    session = open_session(db, timeout=12)
    return session.run('SELECT 1')
